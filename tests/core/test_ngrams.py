"""Benchmark n-grams: a row quoting 13 words of a benchmark text is caught, one sharing 12 is not;
code is compared by code tokens, text without spaces by characters."""

from lettuce_build.core.ngrams import NgramIndex, kind_of, ngram_hashes

BENCHMARK = (
    "The Eiffel Tower was completed in 1889 as the entrance arch to the World's Fair, "
    "and it remained the tallest man-made structure in the world for forty-one years."
)


def test_thirteen_shared_words_contaminate_and_twelve_do_not():
    index = NgramIndex()
    index.add(BENCHMARK)
    words = BENCHMARK.replace(",", "").split()
    thirteen = "Our answer says " + " ".join(words[3:16]) + " and more."
    twelve = "Our answer says " + " ".join(words[3:15]) + " but nothing else of it."
    assert index.shares(thirteen)
    assert not index.shares(twelve)
    assert index.shares(BENCHMARK.upper())  # case and punctuation do not hide it


def test_code_is_compared_by_its_tokens_whatever_its_spacing():
    code = (
        "def check(resp):\n    if resp.status_code >= 500 and not resp.ok:\n        raise Error(resp)\n" * 2
    )
    index = NgramIndex()
    index.add(code, "code")
    row = "def check( resp ):\n  if resp.status_code>=500 and not resp.ok:\n    raise Error( resp )\n" * 2
    assert kind_of(row, "code") == "code" and index.shares(row, "code")
    assert not index.shares("def other():\n    return compute(the, other, values) + 1\n" * 3, "code")


def test_text_without_spaces_is_compared_by_characters():
    text = (
        "東京タワーは一九五八年に完成し、高さは三百三十三メートルで、当時は世界で最も高い自立式鉄塔であった。"
        * 2
    )
    assert kind_of(text) == "characters"
    index = NgramIndex()
    index.add(text)
    assert index.shares("記事によれば" + text[5:70] + "とのことです。")
    assert len(ngram_hashes("short text", "prose", 13)) == 0
