"""The matcher: only added lines, exclusions, first pattern per category, numbering and snippets."""

import pytest

from lettuce_build.sift.matcher import CompiledPatternSet, docstring_flags
from lettuce_build.sift.presets import load_preset

from .patches import ONE_LINE_PER_CATEGORY, diff, patch

V2 = CompiledPatternSet(load_preset("v2"))
V3 = CompiledPatternSet(load_preset("v3"))


@pytest.mark.parametrize(("category", "line"), sorted(ONE_LINE_PER_CATEGORY.items()))
def test_every_category_fires_on_an_added_line(category, line):
    matched = V2.matched(patch(diff("app/views.py", " context", line)))
    assert list(matched) == [category]


def test_removed_and_context_lines_never_match():
    text = patch(diff("a.py", " subprocess.run(x)", "-    subprocess.run(y)", "+    x = 1"))
    assert V2.matched(text) == {}


def test_plus_plus_plus_headers_are_not_added_lines():
    text = patch(diff("tempfile/subprocess.py", "+x = 1"))
    assert V2.matched(text) == {}


def test_an_excluded_line_is_skipped_for_every_category():
    text = patch(diff("a.py", "+    p = pathlib.Path(x); subprocess.run(p)"))
    assert V2.matched(text) == {}
    [line] = V2.scan(text)
    assert line.skipped == r"excluded by pathlib\.Path"


def test_the_record_names_pattern_line_number_and_a_stripped_snippet():
    text = patch(diff("a.py", " ctx", "+        subprocess.call(cmd)   "))
    assert V2.matched(text) == {"command_exec": [r"\bsubprocess\b on line 6: subprocess.call(cmd)"]}


def test_line_numbers_run_across_files_as_indices_into_the_whole_patch():
    text = patch(diff("a.py", "+x = 1"), diff("b.py", " ctx", "+os.system(cmd)"))
    assert V2.matched(text)["command_exec"] == [r"\bos\.system\b on line 11: os.system(cmd)"]


def test_the_snippet_is_cut_at_80_characters():
    long_line = "+" + "    eval(" + "x" * 200 + ")"
    [record] = V2.matched(patch(diff("a.py", long_line)))["command_exec"]
    snippet = record.split(": ", 1)[1]
    assert snippet == ("eval(" + "x" * 200)[:80]


def test_only_the_first_matching_pattern_per_line_and_category_is_recorded():
    text = patch(diff("a.py", "+    os.remove(os.path.join(tempfile.gettempdir(), name))"))
    assert V2.matched(text)["file_io"] == [
        r"\bos\.path\b on line 5: os.remove(os.path.join(tempfile.gettempdir(), name))"
    ]


def test_patterns_are_case_insensitive():
    assert "command_exec" in V2.matched(patch(diff("a.py", "+    SUBPROCESS.RUN(x)")))


def test_v2_dead_patterns_stay_dead_in_v2_and_work_in_v3():
    route = patch(diff("urls.py", "+    path('login/', views.login_view),"))
    assert "url_routing" not in V2.matched(route)
    assert V3.matched(route)["url_routing"][0].startswith(r"(?-i:^\s*path\s*\(\s*['\"]) on line 5")
    decorator = patch(diff("views.py", "+@login_required"))
    assert V2.matched(decorator) == {}
    assert V3.matched(decorator)["auth"] == [r"@login_required\b on line 5: @login_required"]


def test_v2_broad_request_pattern_swallows_the_narrow_ones_and_v3_does_not():
    text = patch(diff("views.py", "+    q = request.POST['q']"))
    assert V2.matched(text)["user_input"][0].startswith(r"\brequest\. ")
    assert V3.matched(text)["user_input"][0].startswith(r"request\.POST ")


def test_v3_ignores_pytest_request_fixture_attributes_where_request_is_pytest_s():
    text = patch(
        diff("src/_pytest/fixtures.py", "+    node = request.node", "+    s = request.session.items")
    )
    assert "user_input" in V2.matched(text) and "auth" in V2.matched(text)
    assert V3.matched(text, "pytest-dev/pytest") == {}
    fixture = patch(diff("tests/conftest.py", "+    return request.param"))
    assert V3.matched(fixture, "psf/requests") == {}


def test_v3_keeps_django_request_attributes_that_share_a_name_with_pytest_s():
    text = patch(
        diff(
            "django/contrib/auth/__init__.py",
            "+    if request.path.startswith(prefix):",
            "+        request.session.cycle_key()",
        )
    )
    matched = V3.matched(text, "django/django")
    assert matched["user_input"][0].startswith(r"\brequest\. on line 5")
    assert matched["auth"][0].startswith(r"request\.session\b on line 6")


def test_v3_a_pathlib_line_start_is_not_a_route_and_a_django_path_is():
    assert V3.matched(patch(diff("a.py", '+    Path("out.txt").write_text(data)'))) == {}
    assert "url_routing" in V3.matched(patch(diff("urls.py", '+    path("login/", views.login),')))


def test_v3_open_of_a_pathlib_path_is_file_io_but_a_path_s_own_open_is_not():
    assert "file_io" in V3.matched(patch(diff("a.py", "+    with open(Path(name)) as handle:")))
    assert "file_io" in V3.matched(patch(diff("a.py", "+    data = open(pathlib.Path(name)).read()")))
    assert V3.matched(patch(diff("a.py", "+    with Path(name).open() as handle:"))) == {}


def test_v3_skips_comments_trailing_comments_and_docstrings():
    text = patch(
        diff(
            "a.py",
            "+def f():",
            '+    """Check the permission of the user."""',
            "+    # call subprocess here",
            "+    x = 1  # eval( is dangerous",
        )
    )
    assert set(V2.matched(text)) == {"auth", "command_exec"}
    assert V3.matched(text) == {}
    assert [line.skipped for line in V3.scan(text)] == [None, "docstring", "comment", "trailing comment"]


def test_v3_keeps_sql_inside_a_multiline_string_literal_as_code():
    text = patch(diff("a.py", '+    sql = """', "+        SELECT * FROM t WHERE cursor = 1", '+    """'))
    assert "database" in V3.matched(text)


def test_a_hunk_that_starts_inside_a_docstring_is_recognised():
    codes = ["    the helper() method.", '    """', "    data = StringIO(data)"]
    assert docstring_flags(codes, hunk_starts_file=False) == [True, True, False]
    codes = ["def f():", '    """Open it.', "    Details.", '    """', "    open(x)"]
    assert docstring_flags(codes, hunk_starts_file=False) == [False, True, True, True, False]


def test_code_after_a_docstring_the_hunk_shows_whole_is_code():
    # each from a real patch whose changed code v3 once skipped as docstring
    opening_with_text = [
        '        """Like :meth:`Flask.add_url_rule` but for a blueprint.  The endpoint for',
        "        the :func:`url_for` function is prefixed with the name of the blueprint.",
        '        """',
        '        if endpoint and "." in endpoint:',
    ]
    assert docstring_flags(opening_with_text, hunk_starts_file=False) == [True, True, True, False]
    bare_first = [
        '        """',
        "        Return an HMAC of the password field.",
        '        """',
        "        return self._get_session_auth_hash()",
        "",
        "    def get_session_auth_fallback_hash(self):",
        "        for fallback_secret in settings.SECRET_KEY_FALLBACKS:",
        "",
        "    def value(self):",
        '        """',
    ]
    assert docstring_flags(bare_first, hunk_starts_file=False) == [True] * 3 + [False] * 6 + [True]
    attribute_docstring = [
        "        self.kwargs = kwargs",
        '        """Any additional arguments passed to the action."""',
        "",
        "        self.metavar = metavar",
        '        """The metavar of the argument.',
        "",
        "        See:",
        '        """',
    ]
    assert (
        docstring_flags(attribute_docstring, hunk_starts_file=False)
        == [False, True, False, False] + [True] * 4
    )


def test_v3_skips_documentation_files():
    text = patch(diff("docs/releases/4.2.txt", "+Use ``subprocess`` with care."))
    assert "command_exec" in V2.matched(text)
    assert V3.matched(text) == {}


def test_v3_path_exclusion_is_case_sensitive_and_scoped_to_file_io():
    text = patch(diff("a.py", "+    Path(x).open(); subprocess.run(y)"))
    assert V2.matched(text) == {}
    assert list(V3.matched(text)) == ["command_exec"]


def test_v3_resolve_needs_an_argument_so_pathlib_resolve_does_not_count():
    assert V3.matched(patch(diff("a.py", "+    p = Path(s).resolve()"))) == {}
    assert "url_routing" in V3.matched(patch(diff("a.py", "+    match = resolve(request.path_info)")))


def test_v3_auth_words_match_inside_snake_case_names():
    text = patch(diff("a.py", "+    if not user.is_authenticated or not has_permission(user):"))
    assert V2.matched(text) == {}
    assert V3.matched(text)["auth"][0].startswith("(?<![^\\W_])authenticat on line 5")


FRAGMENTS = [
    "open(",
    "os.path",
    "Request.GET",
    "request.node",
    "cursor",
    ".filter (",
    "json.load",
    "yaml.safe_load",
    "IS_AUTHENTICATED",
    "session[",
    "path('",
    "resolve(x)",
    "SUBPROCESS",
    "eval (",
    "| safe",
    "Path(",
    "pathlib.Path",
    "@login_required",
    "# ",
    '"""',
    " ",
    "x",
    "_",
    "ſubprocess",
    "K",
    "(",
    ".",
]


@pytest.mark.parametrize("preset", ["v1", "v2", "v3"])
def test_the_literal_prefilter_never_changes_a_result(preset):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    filtered = CompiledPatternSet(load_preset(preset))
    unfiltered = CompiledPatternSet(load_preset(preset), prefilter=False)
    line = st.lists(st.sampled_from(FRAGMENTS), max_size=8).map(lambda parts: "+" + "".join(parts))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(line, min_size=1, max_size=5))
    def check(lines):
        text = patch(diff("app/views.py", *lines))
        assert filtered.matched(text) == unfiltered.matched(text)

    check()


def test_required_literals_of_the_v2_patterns():
    from lettuce_build.sift.matcher import required_literal

    assert required_literal(r"\bjson\.loads?\b") == "json.load"
    assert required_literal(r"\byaml\.(?:safe_)?load\b") == "yaml."
    assert required_literal(r"^\s*path\s*\(\s*['\"]") == "path"
    assert required_literal(r"\|\s*safe\b") == "safe"
    assert required_literal(r"a|b") is None
