"""Unified diffs written for the sift tests."""


def diff(path: str, *body: str) -> str:
    """One file's diff with one hunk of ``body``, its header counting the lines as git does."""
    old = sum(line[:1] in (" ", "-") for line in body)
    new = sum(line[:1] in (" ", "+") for line in body)
    header = f"@@ -{min(old, 1)},{old} +{min(new, 1)},{new} @@"
    return "\n".join([f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}", header, *body])


def patch(*files: str) -> str:
    return "\n".join(files) + "\n"


ONE_LINE_PER_CATEGORY = {
    "file_io": "+    with open(name) as handle:",
    "user_input": "+    value = request.GET['q']",
    "database": "+    cursor.execute(sql)",
    "serialisation": "+    data = json.loads(body)",
    "auth": "+    login(req, user)",
    "url_routing": "+    return HttpResponseRedirect(url)",
    "command_exec": "+    subprocess.run(args)",
    "html_rendering": "+    return mark_safe(html)",
}
