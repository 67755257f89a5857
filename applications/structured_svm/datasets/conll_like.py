"""A CoNLL-2000-like chunking corpus of any size, generated piece by piece.

The corpus is drawn from a small generative model of chunked text, then featurized
with CoNLL-2000's own attribute templates (:data:`~.conll.CONLL_TEMPLATES`, plus the
bias column) into the same dictionary sizes, so ``ChainModel(22, feature_sizes)`` has
CoNLL-2000's d = 1,643,026 whatever the number of sentences.  The model:

* chunk tags (CoNLL's 22 train tags) follow a Markov chain that respects IOB2
  (``I-X`` only after ``B-X`` or ``I-X``);
* each tag emits a POS tag (44) from a peaked categorical, and each POS tag a word
  of a 20,000-word vocabulary from a Zipf law over its own word list;
* sentence lengths are gamma-Poisson with CoNLL's mean and spread (23.7 and 11.1
  tokens, at most 78).

Template values become ids without a dictionary, so that no process needs to see the
whole corpus: a value's id is a hash of its key into the template's size, and a value
is absent (id 0, CoNLL's count-below-3 rule) when it names a rare word, or for POS
bigrams and trigrams by its hash, at rates close to CoNLL-2000 train's (6% of the word
unigrams, 48% of the word bigrams, 3% of the POS trigrams).

Sentences come in blocks of 256, each from its own random stream keyed by the seed
and the block's number: any range of examples is generated alone, in time and memory
proportional to the range, and example ``i`` is the same in every corpus of the same
seed that has it (the first ``n`` examples of a 100x corpus are those of a 1x one).
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from frankwolfe._numbers import check_flag
from frankwolfe._random import as_generator

from ._synthetic_checks import check_counts
from .conll import CONLL_TEMPLATES, _Shifter

__all__ = ["ConllLike", "make_conll_like"]

#: CoNLL-2000 train's dictionary sizes per column (bias, then the 19 templates), as
#: :func:`~.conll.load_conll2000` builds them.
CONLL_FEATURE_SIZES: tuple[int, ...] = (
    1, 6046, 6324, 6325, 6163, 5986, 12432, 12055, 45, 45, 44, 44, 44, 901, 911, 888, 878,
    5241, 5246, 5040)
#: CoNLL-2000's train chunk tags, in :func:`~.conll.load_conll2000`'s order.
CONLL_TAGS: tuple[str, ...] = (
    "B-NP", "B-PP", "I-NP", "B-VP", "I-VP", "B-SBAR", "O", "B-ADJP", "B-ADVP", "I-ADVP",
    "I-ADJP", "I-SBAR", "I-PP", "B-PRT", "B-LST", "B-INTJ", "I-INTJ", "B-CONJP", "I-CONJP",
    "I-PRT", "B-UCP", "I-UCP")
# how often a chunk type starts, roughly CoNLL-2000 train's shares
_TYPE_WEIGHT = {"NP": 0.53, "PP": 0.12, "VP": 0.16, "SBAR": 0.02, "ADJP": 0.02,
                "ADVP": 0.04, "PRT": 0.005, "LST": 0.0005, "INTJ": 0.0005, "CONJP": 0.001,
                "UCP": 0.0002, "O": 0.3}
_CONTINUE = {"NP": 1.2, "VP": 0.5, "ADJP": 0.2, "ADVP": 0.1, "SBAR": 0.02, "PP": 0.005,
             "PRT": 0.005, "CONJP": 0.5, "INTJ": 0.2, "UCP": 0.5}
_N_POS = 44
_VOCAB = 20_000
_LIST = 4_000           # words per POS tag's list
_BIGRAM_KEEP = 800      # both words below it: a word bigram is kept
_POS_ABSENT = {2: 0.001, 3: 0.029}  # absent POS n-grams (by hash), per n
_BLOCK = 256            # sentences per random stream
_MEAN_LEN, _SD_LEN, _MAX_LEN = 23.7, 11.1, 78


def _mix(keys: np.ndarray, salt: int) -> np.ndarray:
    """splitmix64 of ``keys + salt``: a well-spread 64-bit hash, vectorized."""
    z = keys.astype(np.uint64) + np.uint64((salt * 0x9E3779B97F4A7C15) % 2**64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _draw(cdf: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws: for each ``k``, the category of ``cdf[rows[k]]`` at ``u[k]``."""
    c = cdf[rows]
    return np.minimum((c < u[:, None]).sum(axis=1), c.shape[1] - 1)


class ConllLike:
    """A synthetic CoNLL-2000-like chunking corpus of ``n_samples`` sentences.

    Nothing is generated up front: :meth:`examples` and :meth:`shard` draw the
    sentences asked for, the same ones on every call and in every process (an
    instance is a few hundred kilobytes and pickles as such, so a cluster worker can
    build its shard itself).  See the module's text for the model.

    Parameters
    ----------
    n_samples : int
        Number of sentences (CoNLL-2000 train has 8,936).
    random_state : None, int, sequence of int, SeedSequence, BitGenerator, Generator or \
RandomState, optional
        The seed of the corpus: the language (tag chain, emissions, word lists) and
        every sentence.  An integer (or a ``SeedSequence`` of one: ``0`` and
        ``SeedSequence(0)`` give one corpus) is the corpus's :attr:`entropy`; any other
        seed the package accepts is drawn from once, here (a Generator's draws
        continue).

    Attributes
    ----------
    n_states : int
        22 chunk tags (:attr:`labels`).
    feature_sizes : ndarray of int64
        Ids per column (bias, then the 19 templates): CoNLL-2000 train's sizes, for
        ``ChainModel(n_states, feature_sizes)``.

    Examples
    --------
    >>> from frankwolfe.applications.structured_svm import ChainModel, ConllLike
    >>> corpus = ConllLike(89_360, random_state=0)       # 10x CoNLL-2000
    >>> X, y = corpus.shard(3, 8)                          # a worker's eighth
    >>> model = ChainModel(corpus.n_states, corpus.feature_sizes)
    """

    def __init__(self, n_samples: int, *,
                 random_state: Any = None) -> None:
        check_counts("ConllLike", [("n_samples", n_samples, 1)])
        self._build(int(n_samples), _entropy(random_state))

    def _build(self, n_samples: int, entropy: int) -> None:
        """The corpus of ``entropy`` (the integer seed, kept to pickle the corpus)."""
        self.n_samples = n_samples
        self.entropy = entropy
        self.n_states = len(CONLL_TAGS)
        self.labels = list(CONLL_TAGS)
        self.templates = ["bias"] + ["|".join(f"{f}[{o}]" for f, o in t)
                                     for t in CONLL_TEMPLATES]
        self._language(np.random.default_rng(np.random.SeedSequence([entropy, 0])))

    @property
    def feature_sizes(self) -> np.ndarray:
        return np.asarray(CONLL_FEATURE_SIZES, dtype=np.int64)

    def __len__(self) -> int:
        return self.n_samples

    def __reduce__(self) -> Any:
        # the seed, not the language drawn from it, which is far larger
        # (benchmarks/README.md, "Measurements behind code choices")
        return _corpus, (self.n_samples, self.entropy)

    def __repr__(self) -> str:
        return f"ConllLike(n_samples={self.n_samples}, random_state={self.entropy})"

    def _language(self, rng: np.random.Generator) -> None:
        K = self.n_states
        kind = [t.split("-")[-1] for t in CONLL_TAGS]
        begins = np.array([t.startswith("B-") or t == "O" for t in CONLL_TAGS])
        weight = np.array([_TYPE_WEIGHT[k] for k in kind])
        # next tag: a B- tag or O anywhere, I-X only inside an X chunk (IOB2)
        allowed = np.tile(begins, (K, 1))
        for a in range(K):
            if kind[a] != "O":
                allowed[a] |= np.array([t == f"I-{kind[a]}" for t in CONLL_TAGS])
        inside = np.array([t.startswith("I-") for t in CONLL_TAGS])
        # how likely a chunk goes on: long NPs and VPs, one-word PPs (then drawn around)
        prior = np.where(inside, [_CONTINUE.get(k, 0.0) for k in kind], weight)
        trans = allowed * prior * rng.gamma(2.0, size=(K, K))
        self._trans_cdf = np.cumsum(trans / trans.sum(axis=1, keepdims=True), axis=1)
        start = begins * weight
        self._start_cdf = np.cumsum(start / start.sum())[None, :]
        emit = rng.dirichlet(np.full(_N_POS, 0.05), size=K)
        self._emit_cdf = np.cumsum(emit, axis=1)
        # each POS tag's word list: frequent words (low ids) in many lists, Zipf draws
        ranks = np.arange(1, _VOCAB + 1, dtype=float)
        word_cdf = np.cumsum(1.0 / ranks**1.05)
        word_cdf /= word_cdf[-1]
        u = rng.random((_N_POS, _LIST))
        self._lists = np.minimum(np.searchsorted(word_cdf, u), _VOCAB - 1).astype(np.int64)
        pick = np.cumsum(1.0 / np.arange(1, _LIST + 1, dtype=float))
        self._pick_cdf = pick / pick[-1]

    # -- examples ------------------------------------------------------------------

    def examples(self, start: int, stop: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Sentences ``start .. stop - 1``: ``X`` (int32 ``(L, 20)`` ids, column 0 the
        bias) and ``y`` (int64 tag ids), as :func:`~.conll.load_conll2000` gives them."""
        check_counts("ConllLike.examples", [("start", start, 0), ("stop", stop, 0)])
        if not start <= stop <= self.n_samples:
            raise ValueError(f"ConllLike.examples: need 0 <= start <= stop <= n_samples = "
                             f"{self.n_samples}, got start={start!r}, stop={stop!r}")
        X: list[np.ndarray] = []
        y: list[np.ndarray] = []
        for b in range(int(start) // _BLOCK, -(-int(stop) // _BLOCK)):
            lo = max(int(start) - b * _BLOCK, 0)
            hi = min(int(stop) - b * _BLOCK, _BLOCK)
            Xb, yb = self._block(b)
            X += Xb[lo:hi]
            y += yb[lo:hi]
        return X, y

    def shard_range(self, k: int, n_shards: int) -> tuple[int, int]:
        """The examples ``(start, stop)`` of shard ``k`` of ``n_shards`` (contiguous,
        sizes differing by at most one)."""
        check_counts("ConllLike.shard", [("n_shards", n_shards, 1), ("k", k, 0)])
        if k >= n_shards:
            raise ValueError(f"ConllLike.shard: `k` must be < n_shards = {n_shards}, got {k!r}")
        n = self.n_samples
        return int(k) * n // int(n_shards), (int(k) + 1) * n // int(n_shards)

    def shard(self, k: int, n_shards: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Shard ``k`` of ``n_shards``: :meth:`examples` over :meth:`shard_range`."""
        return self.examples(*self.shard_range(k, n_shards))

    def _block(self, b: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The 256 sentences of block ``b`` (all of them, whatever ``n_samples``)."""
        rng = np.random.default_rng(np.random.SeedSequence([self.entropy, 1, b]))
        r = _MEAN_LEN**2 / (_SD_LEN**2 - _MEAN_LEN)  # gamma-Poisson with that mean and sd
        lengths = 1 + rng.poisson(rng.gamma(r, (_MEAN_LEN - 1) / r, size=_BLOCK))
        lengths = np.minimum(lengths, _MAX_LEN).astype(np.int64)
        width = int(lengths.max())
        tags = np.zeros((_BLOCK, width), dtype=np.int64)
        u = rng.random((_BLOCK, width))
        tags[:, 0] = _draw(self._start_cdf, np.zeros(_BLOCK, dtype=np.int64), u[:, 0])
        for t in range(1, width):
            tags[:, t] = _draw(self._trans_cdf, tags[:, t - 1], u[:, t])
        y = tags[np.arange(width)[None, :] < lengths[:, None]]
        n_tok = y.size
        pos = _draw(self._emit_cdf, y, rng.random(n_tok))
        rank = np.minimum(np.searchsorted(self._pick_cdf, rng.random(n_tok)), _LIST - 1)
        word = self._lists[pos, rank]
        ids = self._featurize(word, pos, lengths)
        cuts = np.cumsum(lengths)[:-1]
        return np.split(ids, cuts), np.split(y, cuts)

    def _featurize(self, word: np.ndarray, pos: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The bias and 19 template ids of each token (absent values 0).

        A one-field template numbers its values directly: a word is kept iff it is
        among the ``size - 2`` most frequent (CoNLL's count rule in effect), the begin
        and end markers after them; a POS tag is its code modulo the size.  An n-gram's
        key is hashed into the template's size."""
        shift = _Shifter(lengths)
        fields = {"w": word, "p": pos}
        sizes = {"w": _VOCAB, "p": _N_POS}
        out = np.ones((word.size, len(CONLL_TEMPLATES) + 1), dtype=np.int32)
        for j, template in enumerate(CONLL_TEMPLATES, 1):
            size = CONLL_FEATURE_SIZES[j]
            key = np.zeros(word.size, dtype=np.int64)
            rare = np.zeros(word.size, dtype=bool)
            for field, o in template:
                base = sizes[field] + 2  # codes, then the begin and end markers
                code = shift(fields[field], o, base - 2, base - 1)
                key = key * base + code
                if field == "w":  # markers are frequent values
                    keep = size - 2 if len(template) == 1 else _BIGRAM_KEEP
                    rare |= (code >= keep) & (code < base - 2)
            if len(template) == 1 and template[0][0] == "w":
                ids = np.where(key < size - 2, key + 1, size - (base - 1 - key))
            elif len(template) == 1:
                ids = key % size + 1
            else:
                h = _mix(key, self.entropy * 131 + j)
                ids = (h % np.uint64(size)).astype(np.int64) + 1
                if template[0][0] == "p" and len(template) in _POS_ABSENT:
                    rare |= (h >> np.uint64(40)) % np.uint64(100_000) < int(
                        _POS_ABSENT[len(template)] * 100_000)
            out[:, j] = np.where(rare, 0, ids)
        return out

def _entropy(random_state: Any) -> int:
    """The corpus's integer seed: an int is its own (the corpora of int seeds stay what
    they were), a ``SeedSequence`` made from an int that int (``0`` and
    ``SeedSequence(0)`` give one corpus, as everywhere in the package); any other seed
    :func:`~frankwolfe._random.as_generator` accepts is drawn from once."""
    name = "ConllLike: `random_state`"
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        as_generator(random_state, name)  # refuses a negative one, in the package's words
        return int(random_state)
    if (isinstance(random_state, np.random.SeedSequence) and not random_state.spawn_key
            and isinstance(random_state.entropy, int)):
        return random_state.entropy
    return int(as_generator(random_state, name).integers(2**63))


def _corpus(n_samples: int, entropy: int) -> ConllLike:
    return ConllLike(n_samples, random_state=entropy)


@overload
def make_conll_like(n_samples: int, *, random_state: Any = None,
                    return_info: Literal[False] = False
                    ) -> tuple[list[np.ndarray], list[np.ndarray]]: ...


@overload
def make_conll_like(n_samples: int, *, random_state: Any = None, return_info: Literal[True]
                    ) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]: ...


@overload
def make_conll_like(n_samples: int, *, random_state: Any = None, return_info: bool = False
                    ) -> (tuple[list[np.ndarray], list[np.ndarray]]
                          | tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]): ...


def make_conll_like(n_samples: int, *, random_state: Any = None, return_info: bool = False
                    ) -> (tuple[list[np.ndarray], list[np.ndarray]]
                          | tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]):
    """A whole synthetic CoNLL-2000-like corpus (:class:`ConllLike`) in memory.

    Parameters
    ----------
    n_samples : int
        Number of sentences.
    random_state : None, int, sequence of int, SeedSequence, BitGenerator, Generator or \
RandomState, optional
        The corpus's seed, as :class:`ConllLike`'s.
    return_info : bool, default False
        Also return a dict with ``feature_sizes``, ``n_states``, ``labels`` and
        ``templates``, as :func:`~.conll.load_conll2000`.

    Returns
    -------
    X, y : lists of ndarray
        int32 ``(L, 20)`` ids (column 0 the bias) and int64 tag ids.
    info : dict
        Only when ``return_info`` is True.
    """
    return_info = check_flag(return_info, "return_info", where="make_conll_like")
    corpus = ConllLike(n_samples, random_state=random_state)
    X, y = corpus.examples(0, corpus.n_samples)
    if not return_info:
        return X, y
    return X, y, {"feature_sizes": corpus.feature_sizes, "n_states": corpus.n_states,
                  "labels": corpus.labels, "templates": corpus.templates}
