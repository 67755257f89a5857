"""read_flows on a hand-made flow file whose last line has no line break: whole lines
(closed by ';' or a comment) read as with the break; bare numbers, which a cut file
ends with too, are refused with the way to mark them whole."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe.applications.traffic.tntp import read_flows

_LINES = ["From To Volume Cost", "1 2 4494.5 6.0", "1 3 8119.1 4.0", "2 1 4519.0 6.25"]
_LINKS = [[1, 2], [1, 3], [2, 1]]
_VOLUME = [4494.5, 8119.1, 4519.0]
_COST = [6.0, 4.0, 6.25]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("end", [" ;", ";", "\t; ", " ~ the last link", " ; ~ done"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_whole_last_line_reads_the_same_with_and_without_a_final_line_break(
        tmp_path, end, newline):
    text = newline.join(line + end for line in _LINES)
    with_break = read_flows(_write(tmp_path, "with.tntp", text + newline), n_links=3)
    without = read_flows(_write(tmp_path, "without.tntp", text), n_links=3)
    for a, b, want in zip(with_break, without, (_LINKS, _VOLUME, _COST)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, want)


def test_a_trailing_blank_line_without_a_break_reads_the_same(tmp_path):
    text = "\n".join(_LINES) + "\n"
    a = read_flows(_write(tmp_path, "a.tntp", text))
    b = read_flows(_write(tmp_path, "b.tntp", text + "   "))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("cut", [0, 1, 3])
def test_bare_numbers_without_a_line_break_are_refused_with_the_fix(tmp_path, cut):
    # "6.25" cut to "6.2", "6." or nothing: the same bytes a hand-made file ends with
    text = "\n".join(_LINES)
    path = _write(tmp_path, "cut.tntp", text[:len(text) - cut])
    with pytest.raises(ValueError, match=r"cut\.tntp:4: the last line '2 1 4519\.0 6?\.?2?5?' "
                                         r"does not end with a line break: a truncated file "
                                         r"\(if the file is whole, end its last line with a "
                                         r"line break or ';'\)"):
        read_flows(path)
