"""MinHash in arrays: datasketch's signatures value for value, its band shapes, candidates from
shared bands (a key many texts share pairs each with its next neighbours only), signatures read
back from their file."""

import numpy as np
from datasketch import MinHash, MinHashLSH

from lettuce_build.core.minhash import (
    SignatureStore,
    band_shape,
    candidates,
    shingles,
    signatures,
)

TEXTS = [
    "fastgrid renders large tables in the terminal, page by page, with sticky headers and colours.",
    "short",
    "",
    "日本語のテキストはスペースなしで書かれています。これは二番目の文です。",
    "Install it with pip install fastgrid, or from a clone with pip install -e . inside the folder. " * 3,
]


def test_signatures_are_datasketchs_affine32_values():
    signed = signatures(TEXTS)
    for text, mine in zip(TEXTS, signed, strict=True):
        theirs = MinHash(num_perm=128, scheme="affine32", hashfunc=__import__("zlib").crc32)
        theirs.update_batch(shingles(text))
        assert (mine == theirs.hashvalues).all(), text


def test_band_shapes_are_datasketchs_for_its_thresholds():
    for threshold in (0.3, 0.5, 0.6, 0.7):
        lsh = MinHashLSH(threshold=threshold, num_perm=128)
        assert band_shape(threshold) == (lsh.b, lsh.r)


def test_texts_sharing_a_band_are_candidates_and_a_crowd_pairs_with_its_neighbours(tmp_path):
    store = SignatureStore(tmp_path, "texts", band_shape(0.6))
    same = TEXTS[0]
    store.append(signatures([same, TEXTS[1], same, TEXTS[4]]))
    assert candidates(store).tolist() == [[0, 2]]
    crowd = SignatureStore(tmp_path, "crowd", band_shape(0.6))
    crowd.append(signatures([same] * 6))
    assert candidates(crowd, window=2).tolist() == [
        [0, 1],
        [0, 2],
        [1, 2],
        [1, 3],
        [2, 3],
        [2, 4],
        [3, 4],
        [3, 5],
        [4, 5],
    ]


def test_signatures_are_read_back_in_any_order(tmp_path):
    store = SignatureStore(tmp_path, "texts", band_shape(0.6))
    signed = signatures(TEXTS)
    store.append(signed[:2])
    store.append(signed[2:])
    assert (store.read(np.array([4, 0, 4])) == signed[[4, 0, 4]]).all()


def test_rows_with_nothing_to_cut_are_signed_as_empty():
    assert (signatures(["", "   ", "..."]) == 0xFFFFFFFF).all()
