"""The review page: one self-contained HTML document (no file, font or script from anywhere
else). Every piece of sample text is put in with ``textContent``: none is ever parsed as markup.

Keys: ``y``/``n`` the clean answer is supported or not; ``1``-``9`` choose a span, ``f`` it is
really false, ``t`` it is not (the text is true), ``c`` its category is another (each press the
next one); ``q``/``w`` the question fits or not; ``Enter`` (or ``→``) saves and goes on, ``←`` goes
back. The page opens at the first sample this reviewer has not reviewed. It asks the server for
the samples a page of them at a time, so a build of any size opens at once.
"""

from __future__ import annotations

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 1.5em auto; max-width: 62em; color: #222; }
header { display: flex; gap: 1.5em; align-items: baseline; flex-wrap: wrap; }
#progress { color: #555; }
section { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 1em; margin: 0.8em 0; }
h2 { font-size: 0.9em; text-transform: uppercase; color: #777; margin: 0.2em 0; }
#context { white-space: pre-wrap; background: #f6f6f6; padding: 0.5em; max-height: 24em; overflow: auto; }
#answer { white-space: pre-wrap; }
mark.evidence { background: #fff3b0; }
mark.span { padding: 0 0.15em; border-radius: 3px; outline: 2px solid transparent; }
mark.span.chosen { outline-color: #222; }
.verdicts span { margin-right: 1.2em; }
.yes { color: #176b2c; font-weight: bold; } .no { color: #a01818; font-weight: bold; }
kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 0.3em; font-size: 0.85em; }
#status { color: #555; min-height: 1.5em; }
"""

SCRIPT = """
const token = new URLSearchParams(location.search).get("token");
// the samples come a page at a time (by position); `loaded` keeps the pages seen
const PAGE = 100, loaded = new Map();
let data, at = 0, draft = null, chosen = 0;
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}
function fresh(sample) {
  const old = sample.verdict;
  return {
    key: sample.key, split: sample.split,
    answer: old ? old.answer : null, question: old ? old.question : null,
    spans: sample.labels.map((span, i) => ({
      start: span.start, end: span.end,
      false: old && old.spans[i] ? old.spans[i].false : null,
      category: old && old.spans[i] && old.spans[i].category ? old.spans[i].category : span.category,
    })),
  };
}
function pieces(text, ranges) {
  // text cut at the ranges' edges: [piece, index of the range it is in or -1]
  const cuts = new Set([0, text.length]);
  ranges.forEach(([s, e]) => { cuts.add(s); cuts.add(e); });
  const edges = [...cuts].sort((a, b) => a - b), out = [];
  for (let i = 0; i + 1 < edges.length; i++) {
    const [s, e] = [edges[i], edges[i + 1]];
    out.push([text.slice(s, e), ranges.findIndex(([rs, re]) => rs <= s && e <= re)]);
  }
  return out;
}
function mark(value) {
  return value === null ? el("span", "not marked") : el("span", value ? "yes" : "no", value ? "yes" : "no");
}
async function ask(path) {
  const response = await fetch(`${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`);
  return response.json();
}
async function load(position) {
  if (loaded.has(position)) return;
  const start = position - (position % PAGE);
  const page = await ask(`/api/samples?start=${start}&count=${PAGE}`);
  data = page;
  page.samples.forEach((sample) => loaded.set(sample.position, sample));
}
function render() {
  const sample = loaded.get(at);
  $("progress").textContent = Object.entries(data.splits).map(
    ([split, counts]) => `${split}: ${counts.reviewed} of ${counts.samples} reviewed`
  ).join(" · ") + ` · sample ${at + 1} of ${data.total}`;
  $("reviewer").textContent = data.reviewer;
  $("shortcuts").textContent = data.shortcuts.join(" · ");
  if (!sample) return;
  $("key").textContent = `${sample.split} · ${sample.key}`;
  const context = $("context"); context.replaceChildren();
  for (const [text, inside] of pieces(sample.context, sample.evidence)) {
    context.append(inside >= 0 ? el("mark", text, "evidence") : document.createTextNode(text));
  }
  $("question").textContent = sample.question;
  const answer = $("answer"); answer.replaceChildren();
  const ranges = sample.labels.map((s) => [s.start, s.end]);
  for (const [text, inside] of pieces(sample.answer, ranges)) {
    if (inside < 0) { answer.append(document.createTextNode(text)); continue; }
    const span = el("mark", text, "span" + (inside === chosen ? " chosen" : ""));
    span.style.background = data.colours[sample.labels[inside].category] || data.other_colour;
    span.append(el("sup", String(inside + 1)));
    answer.append(span);
  }
  const verdicts = $("verdicts"); verdicts.replaceChildren();
  const line = (label, value) => {
    const p = el("p"); p.append(el("b", label + ": "), mark(value)); verdicts.append(p);
  };
  if (!sample.labels.length) line("clean answer supported (y/n)", draft.answer);
  draft.spans.forEach((said, i) => {
    const p = el("p", "", i === chosen ? "chosen" : "");
    p.append(el("b", `span ${i + 1} "${sample.labels[i].text}" really false (f/t): `), mark(said.false));
    const intended = sample.labels[i].category;
    const category = said.category === intended
      ? `${intended} (as intended)` : `${said.category} (intended ${intended})`;
    p.append(el("span", ` · category (c): ${category}`));
    verdicts.append(p);
  });
  line("question fits (q/w)", draft.question);
}
async function go(to) {
  const target = Math.max(0, Math.min(data.total - 1, to));
  await load(target);  // the keys act on the sample shown until the next one is here
  at = target; draft = fresh(loaded.get(at)); chosen = 0; render();
}
async function save() {
  const sample = loaded.get(at);
  const response = await fetch(`/api/verdicts?token=${encodeURIComponent(token)}`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(draft),
  });
  const said = await response.json();
  if (!response.ok) { $("status").textContent = "not saved: " + said.error; return false; }
  sample.verdict = JSON.parse(JSON.stringify(draft));
  $("status").textContent = `saved ${sample.key}`;
  const open = await ask(`/api/open?after=${at}`);
  data.splits = open.splits;
  return open;
}
document.addEventListener("keydown", async (event) => {
  if (!draft || event.ctrlKey || event.metaKey || event.altKey) return;
  const sample = loaded.get(at), key = event.key;
  if (key === "y" || key === "n") draft.answer = sample.labels.length ? null : key === "y";
  else if (key === "q" || key === "w") draft.question = key === "q";
  else if (/^[1-9]$/.test(key) && Number(key) <= draft.spans.length) chosen = Number(key) - 1;
  else if ((key === "f" || key === "t") && draft.spans.length) draft.spans[chosen].false = key === "f";
  else if (key === "c" && draft.spans.length) {
    const all = data.categories, now = all.indexOf(draft.spans[chosen].category);
    draft.spans[chosen].category = all[(now + 1) % all.length];
  } else if (key === "Enter" || key === "ArrowRight") {
    const saved = await save();
    if (saved) await go(saved.open !== null ? saved.open : at + 1);
    return;
  } else if (key === "ArrowLeft") { go(at - 1); return; }
  else return;
  event.preventDefault();
  render();
});
ask("/api/samples?count=0").then(async (first) => {
  data = first;
  if (!data.total) {
    document.body.dataset.ready = "1";
    $("status").textContent = "no samples to review";
    return;
  }
  await go(data.open !== null ? data.open : 0);
  document.body.dataset.ready = "1";
});
"""

HELP = (
    "<kbd>y</kbd>/<kbd>n</kbd> clean answer supported · <kbd>1</kbd>-<kbd>9</kbd> choose a span · "
    "<kbd>f</kbd>/<kbd>t</kbd> span really false / true · <kbd>c</kbd> its category · "
    "<kbd>q</kbd>/<kbd>w</kbd> question fits / not · <kbd>Enter</kbd> save and next · "
    "<kbd>←</kbd> back"
)


def page(nonce: str) -> str:
    """The page, its script allowed by ``nonce`` (the server's Content-Security-Policy)."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>lettuce-build review</title>'
        f"<style>{STYLE}</style></head><body>"
        '<header><h1>review</h1><span>reviewer <b id="reviewer"></b></span>'
        '<span id="progress"></span></header>'
        f"<p>{HELP}</p>"
        '<p id="shortcuts"></p>'
        '<p id="key"></p>'
        "<section><h2>context (the evidence the answer used is highlighted)</h2>"
        '<div id="context"></div></section>'
        '<section><h2>question</h2><div id="question"></div></section>'
        '<section><h2>answer</h2><div id="answer"></div></section>'
        '<section class="verdicts"><h2>your verdict</h2><div id="verdicts"></div></section>'
        '<p id="status"></p>'
        f'<script nonce="{nonce}">{SCRIPT}</script></body></html>'
    )
