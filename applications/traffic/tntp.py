"""Readers for the TNTP formats of the Transportation Networks for Research repository.

* net file: metadata lines ``<KEY> value`` up to ``<END OF METADATA>``, ``~``
  comments, then one link a line ending with ``;``:
  ``init_node term_node capacity length free_flow_time b power speed toll link_type``;
* trips file: metadata, then blocks ``Origin o`` followed by ``d : flow;``
  entries (any number a line, any spacing);
* flow file: a header line, then ``from to volume cost`` a line.

Node numbers in the files are 1-based; the :class:`Network` is 0-based.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from frankwolfe._numbers import check_whole, is_whole

from ..data.home import ENV_HOME
from ..data.sources import check_published
from .network import Network

__all__ = ["read_net", "read_trips", "read_flows", "read_tntp", "load_siouxfalls"]

_META = re.compile(r"^\s*<([^>]+)>\s*(.*)$")
_ORIGIN_LINE = re.compile(r"^\s*Origin\s+(\S+)\s*$", re.IGNORECASE)
#: the most zones :func:`read_trips` makes a demand matrix for: a dense matrix of this
#: many zones takes 2 GiB (Austin, of the TNTP collection, has 7388 zones: 0.4 GiB)
MAX_ZONES = 16384
#: the most nodes :func:`read_tntp` makes per-node arrays for, beyond those the links use
#: (a header of 10**12 nodes asked 7 TiB; the largest TNTP networks have ~10**5 nodes)
MAX_NODES = 1 << 24


def _read_text(path: str | os.PathLike) -> str:
    """The file's text; binary garbage is a ``ValueError`` naming the file."""
    try:
        # utf-8-sig: a byte-order mark hid the first metadata line from its pattern, which
        # was then dropped without a word (a first <FIRST THRU NODE> lost: wrong flows)
        return Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = Path(path).read_bytes()[:e.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not a text file (byte {e.object[e.start]:#04x} at "
                         f"offset {e.start})") from None


def _number(token: str, path: object, line_no: int, what: str) -> float:
    """``token`` as a finite float, else a ``ValueError`` naming the file, line and token."""
    try:
        v = float(token.replace("d", "e").replace("D", "e"))
    except ValueError:
        v = float("nan")
    if not np.isfinite(v):
        raise ValueError(f"{path}:{line_no}: {what} must be a finite number, got {token!r}")
    return v


def _node(token: str, path: object, line_no: int, what: str) -> int:
    """``token`` as a positive integer (``3`` or ``3.0``), else a named ``ValueError``."""
    v = _number(token, path, line_no, what)
    if v != int(v) or v < 1 or v > 2**62:
        raise ValueError(f"{path}:{line_no}: {what} must be a positive integer, got {token!r}")
    return int(v)


def _strip_comment(line: str) -> str:
    return line.split("~", 1)[0]


def _split_metadata(text: str) -> tuple[dict[str, str], list[str], int]:
    """Metadata as ``{KEY: value}``, the remaining body lines and the line number (1-based)
    of the first of them."""
    meta: dict[str, str] = {}
    lines = text.splitlines()
    has_end = any("<END OF METADATA>" in ln.upper() for ln in lines)
    body_start = 0
    for i, line in enumerate(lines):
        m = _META.match(line)
        if m:
            key = m.group(1).strip().upper()
            if key == "END OF METADATA":
                body_start = i + 1
                break
            meta[key] = _strip_comment(m.group(2)).strip()
            body_start = i + 1
        elif not has_end and _strip_comment(line).strip():
            break
    return meta, lines[body_start:], body_start + 1


def _meta_int(meta: dict[str, str], key: str, path: object) -> int | None:
    """The metadata count ``key`` (``24`` or ``24.0``), else a ``ValueError`` naming the
    file, the key and the text (``int(float(...))`` truncated ``24.5`` to 24)."""
    if key not in meta or not meta[key]:
        return None
    try:
        v = float(meta[key])
    except ValueError:
        v = float("nan")
    if not is_whole(v, 0):
        raise ValueError(f"{path}: metadata <{key}> must be a non-negative integer, got "
                         f"{meta[key]!r}")
    return int(v)


def _meta_float(meta: dict[str, str], key: str, path: object) -> float | None:
    if key not in meta or not meta[key]:
        return None
    try:
        v = float(meta[key])
    except ValueError:
        v = float("nan")
    if not np.isfinite(v):
        raise ValueError(f"{path}: metadata <{key}> must be a finite number, got "
                         f"{meta[key]!r}")
    return v


def read_net(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read a TNTP network file.

    Parameters
    ----------
    path : path-like
        The ``*_net.tntp`` file.

    Returns
    -------
    links : dict of str to ndarray
        ``init_node``, ``term_node`` (1-based, as in the file), ``capacity``,
        ``length``, ``free_flow_time``, ``b``, ``power``, ``speed``, ``toll``,
        ``link_type``; missing trailing columns are 0.
    metadata : dict of str to str
        The ``<KEY> value`` lines, keys upper-cased.

    Raises
    ------
    ValueError
        Naming the file (and the line, the key or the token): a link line that is not
        ``init_node term_node capacity length free_flow_time ...``, a file that holds no
        link, a ``<NUMBER OF LINKS>`` other than the links read, or a last link line
        that ends with neither ``;`` nor a line break (a truncated file: its last
        number may be cut, its last columns lost).
    """
    text = _read_text(path)
    meta, body, first = _split_metadata(text)
    rows: list[list[float]] = []
    last = ""  # the last link line, without its comment
    for line_no, line in enumerate(body, first):
        data = _strip_comment(line).strip()
        line = data.replace(";", " ").strip()
        if not line:
            continue
        last = data
        tokens = line.split()
        if len(tokens) < 5:
            raise ValueError(
                f"{path}:{line_no}: a link line needs at least init_node term_node capacity "
                f"length free_flow_time, got {line!r}"
            )
        vals = [float(_node(t, path, line_no, name))
                for t, name in zip(tokens[:2], ("init_node", "term_node"))]
        vals += [_number(t, path, line_no, "a link value") for t in tokens[2:]]
        rows.append((vals + [0.0] * 10)[:10])
    if not rows:
        # an empty or foreign file read as a network of no link: nothing to assign
        raise ValueError(f"{path}: the file holds no link line: not a TNTP net file (or an "
                         "empty one)")
    lines = text.splitlines()
    if not (text.endswith(("\n", "\r")) or last.endswith(";") or "~" in lines[-1]
            or not lines[-1].strip()):
        # every link line of the format ends with ';' (the published files' too): a
        # file cut inside its last link still parses, the cut number short and the
        # columns after it read as 0; a line break after it says the line is whole
        raise ValueError(f"{path}:{len(lines)}: the last link line {lines[-1].strip()!r:.80} "
                         "ends with neither ';' nor a line break: a truncated file (if the "
                         "file is whole, end its last line with ';' or a line break)")
    table = np.array(rows, dtype=float).reshape(-1, 10)
    names = ("init_node", "term_node", "capacity", "length", "free_flow_time", "b", "power",
             "speed", "toll", "link_type")
    links = {name: table[:, i].copy() for i, name in enumerate(names)}
    links["init_node"] = links["init_node"].astype(np.int64)
    links["term_node"] = links["term_node"].astype(np.int64)
    n_links = _meta_int(meta, "NUMBER OF LINKS", path)
    if n_links is not None and n_links != table.shape[0]:
        raise ValueError(
            f"{path}: <NUMBER OF LINKS> says {n_links} but {table.shape[0]} links were read")
    return links, meta


def read_trips(path: str | os.PathLike,
               n_zones: int | None = None) -> tuple[np.ndarray, dict[str, str]]:
    """Read a TNTP trips (OD demand) file.

    Parameters
    ----------
    path : path-like
        The ``*_trips.tntp`` file.
    n_zones : int, optional
        Matrix size; default ``<NUMBER OF ZONES>``, else the largest zone read.  Where
        the file's ``<NUMBER OF ZONES>`` says another number, the file is refused.

    Returns
    -------
    demand : ndarray, shape (n_zones, n_zones)
        ``demand[o, d]`` trips from zone ``o + 1`` to zone ``d + 1``.
    metadata : dict of str to str

    Raises
    ------
    ValueError
        Naming the file (and the line, the key or the entry): an entry that is not
        ``destination : trips;`` or lies outside the zones, a file without an ``Origin``
        line, an origin whose block appears twice or a destination listed twice in one
        block (the format lists each pair once: readers of it disagree on a repeat,
        the collection's own script keeps the last value, a plain sum adds them), a
        ``<TOTAL OD FLOW>`` other than the entries' sum, a ``<NUMBER OF ZONES>`` other
        than ``n_zones`` or beyond the largest zone the entries name, or more than
        :data:`MAX_ZONES` zones (the dense matrix of that many is refused before it is
        allocated).
    """
    if n_zones is not None:
        check_whole(n_zones, "n_zones", 1, "read_trips")
    meta, body, first = _split_metadata(_read_text(path))
    origins: list[int] = []
    dests: list[int] = []
    trips_of: list[float] = []
    lines_of: list[int] = []
    origin: int | None = None
    origin_line: dict[int, int] = {}  # origin -> the line of its block
    block: dict[int, int] = {}  # destination -> its line, in the current origin's block
    for line_no, raw in enumerate(body, first):
        line = _strip_comment(raw)
        m = _ORIGIN_LINE.match(line)
        if m:
            origin = _node(m.group(1), path, line_no, "the origin")
            if origin in origin_line:
                raise ValueError(f"{path}:{line_no}: a second block of origin {origin} (the "
                                 f"first is on line {origin_line[origin]}): each origin has "
                                 "one block")
            origin_line[origin] = line_no
            block = {}
            continue
        parts = line.split(";")
        if parts[-1].strip():  # every entry ends with ';': a cut file ends without one
            raise ValueError(f"{path}:{line_no}: entry {parts[-1].strip()!r} does not end "
                             "with ';' (a truncated or malformed file)")
        for part in parts[:-1]:
            part = part.strip()
            if not part:
                continue
            if origin is None:
                raise ValueError(f"{path}:{line_no}: demand entry {part!r} before the first "
                                 "'Origin' line")
            d_str, colon, val = part.partition(":")
            if not colon:
                raise ValueError(f"{path}:{line_no}: a demand entry is 'destination : trips', "
                                 f"got {part!r}")
            trips = _number(val.strip(), path, line_no, f"the trips of entry {part!r}")
            if trips < 0:
                raise ValueError(f"{path}:{line_no}: negative trips in entry {part!r}")
            dest = _node(d_str.strip(), path, line_no, "the destination")
            if dest in block:
                raise ValueError(f"{path}:{line_no}: destination {dest} of origin {origin} "
                                 f"is listed a second time (first on line {block[dest]}): "
                                 "each OD pair is listed once")
            block[dest] = line_no
            origins.append(origin)
            dests.append(dest)
            trips_of.append(trips)
            lines_of.append(line_no)
    if not origin_line:
        # an empty or foreign file read as no demand at all: a "converged" zero assignment
        raise ValueError(f"{path}: no 'Origin' line: not a TNTP trips file (or an empty one)")
    stated = _meta_int(meta, "NUMBER OF ZONES", path)
    if n_zones is not None and stated is not None and stated != n_zones:
        raise ValueError(f"{path}: <NUMBER OF ZONES> says {stated} but {int(n_zones)} zones "
                         "were expected (the network's)")
    # zones past the last one named are legal (no trips): the header sizes the matrix,
    # bounded by MAX_ZONES below before it is allocated
    named = max(max(origin_line), max(dests, default=0))
    where, key = f"{path}", "`n_zones`"  # what sized the matrix, for the messages
    if n_zones is None and stated is not None:
        n_zones, key = stated, "<NUMBER OF ZONES>"
    elif n_zones is None:
        n_zones, key = named, "the largest zone number"
        where = f"{path}:{origin_line.get(named) or lines_of[dests.index(named)]}"
    n_zones = int(n_zones)
    o = np.array(origins, dtype=np.int64) - 1
    d = np.array(dests, dtype=np.int64) - 1
    outside = (o >= n_zones) | (d >= n_zones)
    if outside.any():
        k = int(np.flatnonzero(outside)[0])
        zone, what = (origins[k], "origin") if o[k] >= n_zones else (dests[k], "destination")
        raise ValueError(f"{path}:{lines_of[k]}: zone numbers must lie in 1..{n_zones}, got "
                         f"{what} {zone}")
    blocks = [(ln, org) for org, ln in origin_line.items() if org > n_zones]
    if blocks:
        ln, org = min(blocks)
        raise ValueError(f"{path}:{ln}: zone numbers must lie in 1..{n_zones}, got origin "
                         f"{org}")
    if n_zones > MAX_ZONES:
        raise ValueError(f"{where}: {key} is {n_zones}: more than MAX_ZONES = {MAX_ZONES} "
                         f"zones (a dense {n_zones} x {n_zones} demand matrix of "
                         f"{8 * n_zones**2 / 2**30:.3g} GiB); raise "
                         "frankwolfe.applications.traffic.tntp.MAX_ZONES if that is meant")
    demand = np.zeros((n_zones, n_zones))
    np.add.at(demand, (o, d), np.array(trips_of, dtype=float))
    total = _meta_float(meta, "TOTAL OD FLOW", path)
    if total is not None and not np.isclose(total, demand.sum(), rtol=1e-6, atol=1e-6):
        raise ValueError(
            f"{path}: <TOTAL OD FLOW> says {total} but the entries sum to {demand.sum()}")
    return demand, meta


def read_flows(path: str | os.PathLike, n_links: int | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read a TNTP flow file (best-known solution).

    Parameters
    ----------
    path : str or path-like
        The ``*_flow.tntp`` file: a header line ``From To Volume Cost`` (optional: the
        first line is the header when its first two tokens are not numbers), then one
        line ``from to volume [cost]`` per link, each ending with a line break (the
        last one may end with TNTP's ``;`` or a ``~`` comment instead, or hold no
        numbers: then nothing of them is cut).
    n_links : int, optional
        The links of the network: a file with another number of flow lines is
        refused.

    Returns
    -------
    links : ndarray of int64, shape (m, 2)
        ``(from, to)`` node numbers as in the file (1-based).
    volume : ndarray of float, shape (m,)
        The link volumes.
    cost : ndarray of float, shape (m,)
        The link costs at those volumes; NaN on lines without a cost.

    Raises
    ------
    ValueError
        When the file holds no flow line, a line is not ``from to volume [cost]``
        (the message names the file, the line and the token), the last line's
        numbers end with neither a line break nor ``;`` or a comment (a truncated
        file: its last number may be cut), or the flow lines are not ``n_links``.
    """
    if n_links is not None:
        check_whole(n_links, "n_links", 1, "read_flows")
    rows = []
    header_seen = False
    text = _read_text(path)
    lines = text.splitlines()
    for line_no, line in enumerate(lines, 1):
        parts = _strip_comment(line).replace(";", " ").split()
        if not parts:
            continue
        if not header_seen:  # "From To Volume Cost": the first line that is not blank
            header_seen = True
            # a header names its columns: a first data line with a typo in its volume
            # ("1 2 1O.5 6.0") was taken for one and dropped
            if not any(_is_number(p) for p in parts[:2]):
                continue
        if len(parts) < 3:
            raise ValueError(f"{path}:{line_no}: a flow line is 'from to volume [cost]', "
                             f"got {line.strip()!r}")
        vals = [float(_node(t, path, line_no, w)) for t, w in zip(parts[:2], ("from", "to"))]
        vals += [_number(t, path, line_no, w) for t, w in zip(parts[2:4], ("volume", "cost"))]
        rows.append(vals + [np.nan] * (4 - len(vals)))
    if not rows:
        raise ValueError(f"{path}: no flow lines ('from to volume cost'): not a TNTP flow "
                         "file")
    data, tilde, _ = lines[-1].partition("~")
    data = data.strip()
    if not (text.endswith(("\n", "\r")) or tilde or not data or data.endswith(";")):
        # the published files end every line with one: a download or copy cut inside the
        # last line still parses, its number cut short ("12378.64" of "12378.642039980477");
        # a closing ';' or a comment after the numbers says they are whole
        raise ValueError(f"{path}:{len(lines)}: the last line {lines[-1].strip()!r:.80} does "
                         "not end with a line break: a truncated file (if the file is "
                         "whole, end its last line with a line break or ';')")
    if n_links is not None and len(rows) != n_links:
        raise ValueError(f"{path}: {len(rows)} flow lines for the {int(n_links)} links of the "
                         "network: a truncated file, or another network's")
    table = np.array(rows, dtype=float).reshape(-1, 4)
    return table[:, :2].astype(np.int64), table[:, 2].copy(), table[:, 3].copy()


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_tntp(net_path: str | os.PathLike, trips_path: str | os.PathLike, *,
              toll_factor: float | None = None, distance_factor: float | None = None) -> Network:
    """Build a :class:`Network` from a TNTP net file and trips file.

    Parameters
    ----------
    net_path, trips_path : path-like
    toll_factor, distance_factor : float, optional
        Weights of tolls and lengths in the generalized cost; default the
        file's ``<TOLL FACTOR>`` / ``<DISTANCE FACTOR>``, else 0.

    Returns
    -------
    Network
        Links with 0-based node indices, the demand of the trips file (zones ``1..z``
        as rows ``0..z-1``), the net file's metadata.

    Raises
    ------
    ValueError
        Naming the file and line, for a malformed or inconsistent file (link counts,
        zone counts, total flow, node numbers); naming the key, for a
        ``<NUMBER OF ZONES>`` above :data:`MAX_ZONES` or a ``<NUMBER OF NODES>`` above
        :data:`MAX_NODES` (and above the largest node the links use: nodes past them
        are legal, isolated), zones more than nodes, a ``<NUMBER OF NODES>`` below the
        largest node used, or a ``<FIRST THRU NODE>`` outside
        ``1..n_nodes`` (TNTP numbers nodes from 1; without the key every node may be
        passed through, as with 1).
    """
    links, meta = read_net(net_path)
    top = int(max(links["init_node"].max(), links["term_node"].max()))
    n_zones = _meta_int(meta, "NUMBER OF ZONES", net_path)
    n_nodes = _meta_int(meta, "NUMBER OF NODES", net_path)
    # the headers size the demand matrix and every per-node array: bounded before
    # anything is allocated (10**12 nodes passed here); nodes past those the links use
    # are legal (isolated nodes, zones without links)
    for key, value, cap in (("NUMBER OF ZONES", n_zones, MAX_ZONES),
                            ("NUMBER OF NODES", n_nodes, MAX_NODES)):
        if value is not None and value > max(top, cap):
            raise ValueError(f"{net_path}: <{key}> says {value}: more than {cap} and than "
                             f"the largest node the links use ({top}); raise "
                             f"frankwolfe.applications.traffic.tntp.MAX_"
                             f"{'ZONES' if cap == MAX_ZONES else 'NODES'} if that is meant")
    if n_zones is not None and n_nodes is not None and n_zones > n_nodes:
        raise ValueError(f"{net_path}: <NUMBER OF ZONES> says {n_zones} but <NUMBER OF "
                         f"NODES> {n_nodes}: zones are the nodes 1..z")
    if n_nodes is not None and n_nodes < top:
        raise ValueError(f"{net_path}: <NUMBER OF NODES> says {n_nodes} but the links use "
                         f"node {top}")
    n_nodes = top if n_nodes is None else n_nodes
    first_thru = _meta_int(meta, "FIRST THRU NODE", net_path)
    if first_thru is None:
        first_thru = 1
    elif not 1 <= first_thru <= n_nodes:
        raise ValueError(f"{net_path}: <FIRST THRU NODE> must be a node number in "
                         f"1..{n_nodes} (the nodes are numbered from 1), got {first_thru}")
    demand, _ = read_trips(trips_path, n_zones)
    if toll_factor is None:
        toll_factor = _meta_float(meta, "TOLL FACTOR", net_path) or 0.0
    if distance_factor is None:
        distance_factor = _meta_float(meta, "DISTANCE FACTOR", net_path) or 0.0
    tail = links["init_node"] - 1
    head = links["term_node"] - 1
    if tail.size and min(tail.min(), head.min()) < 0:
        k = int(np.flatnonzero((tail < 0) | (head < 0))[0])
        raise ValueError(f"{net_path}: node numbers must start at 1, got link {k + 1} "
                         f"(1-based) from node {int(tail[k]) + 1} to node {int(head[k]) + 1}")
    return Network(
        init_node=tail, term_node=head, free_flow_time=links["free_flow_time"],
        capacity=links["capacity"], b=links["b"], power=links["power"], demand=demand,
        n_nodes=n_nodes, first_thru_node=first_thru - 1, length=links["length"],
        toll=links["toll"], toll_factor=toll_factor, distance_factor=distance_factor,
        name=Path(net_path).name.replace("_net.tntp", ""), metadata=meta,
    )


def load_siouxfalls(data_home: str | os.PathLike | None = None) -> tuple[Network, np.ndarray]:
    """The SiouxFalls network and its best-known link flows.

    Parameters
    ----------
    data_home : path-like, optional
        Folder holding ``tntp/SiouxFalls/``; default ``$FRANKWOLFE_DATA``.

    Returns
    -------
    network : Network
    best_flows : ndarray, shape (76,)

    Raises
    ------
    ValueError
        When a file does not parse, or a file is not the published one (the sha256 of
        the net, trips and flow files) or the flow file does not have a line per link
        in the net file's order.
    """
    if data_home is None:
        data_home = os.environ.get(ENV_HOME)
        if data_home is None:
            raise ValueError(f"load_siouxfalls: pass `data_home` or set {ENV_HOME}")
    folder = Path(data_home) / "tntp" / "SiouxFalls"
    if not folder.is_dir():
        raise FileNotFoundError(f"load_siouxfalls: no folder {folder}")
    net = read_tntp(folder / "SiouxFalls_net.tntp", folder / "SiouxFalls_trips.tntp")
    # a net or trips file cut at a line end (or with a changed number) still parses
    for kind in ("net", "trips"):
        check_published(folder / f"SiouxFalls_{kind}.tntp",
                        f"tntp/SiouxFalls/SiouxFalls_{kind}.tntp", "load_siouxfalls")
    flow = folder / "SiouxFalls_flow.tntp"
    check_published(flow, "tntp/SiouxFalls/SiouxFalls_flow.tntp", "load_siouxfalls")
    ends, volume, _ = read_flows(flow, n_links=net.init_node.size)
    if not (np.array_equal(ends[:, 0] - 1, net.init_node)
            and np.array_equal(ends[:, 1] - 1, net.term_node)):
        raise ValueError(f"{folder}: the flow file's links are not in the net file's order")
    return net, volume
