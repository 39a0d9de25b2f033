/** The console's styles: no external fonts or images; readable from a phone to a wide screen. */
export const APP_CSS: string = `
:root { --fg: #1d2330; --muted: #5c6577; --bg: #f7f8fa; --card: #fff; --line: #dde1e8; --accent: #2457c5;
  --working: #2457c5; --input_required: #a15c00; --completed: #1c7c3a; --failed: #b3261e; --cancelled: #6b6b6b; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ef; --muted: #a2aabb; --bg: #14171d; --card: #1c2029; --line: #2f3542; --accent: #7aa2ff;
    --working: #7aa2ff; --input_required: #f0a640; --completed: #58c27d; --failed: #ff7a70; --cancelled: #a0a0a0; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.top { display: flex; gap: 12px; align-items: center; padding: 10px 16px; background: var(--card); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); }
.role { font-size: 12px; padding: 2px 8px; border-radius: 10px; border: 1px solid var(--line); color: var(--muted); }
.live { margin-left: auto; font-size: 12px; color: var(--muted); }
main:focus { outline: none; }
main { padding: 12px 16px; max-width: 1400px; margin: 0 auto; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin-bottom: 12px; }
h1 { font-size: 20px; margin: 0 0 8px; word-break: break-all; }
h2 { font-size: 16px; margin: 0 0 8px; }
.counts { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 6px; }
.count { border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 16px; padding: 2px 12px; min-height: 30px; cursor: pointer; font: inherit; }
.count[aria-pressed="true"] { border-color: var(--accent); box-shadow: inset 0 0 0 1px var(--accent); }
.count b { margin-left: 4px; }
.chart { width: 100%; height: 56px; display: block; }
.axis { display: flex; justify-content: space-between; font-size: 11px; color: var(--muted); font-variant-numeric: tabular-nums; border-top: 1px solid var(--line); }
.chart .created { fill: var(--working); }
.chart .finished { fill: var(--completed); }
.legend { font-size: 13px; color: var(--muted); display: flex; gap: 16px; flex-wrap: wrap; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.chart.queue { height: 48px; }
.chart .waiting { fill: var(--input_required); }
.swatch.waiting { background: var(--input_required); }
.swatch.created { background: var(--working); } .swatch.finished { background: var(--completed); }
form.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 8px; align-items: end; }
label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
input, select, button { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); min-height: 36px; }
button { cursor: pointer; }
input[type='checkbox'] { min-height: 0; margin: 0; vertical-align: middle; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.danger { background: var(--failed); color: #fff; border-color: var(--failed); }
button:disabled { opacity: 0.5; cursor: default; }
a.button { display: inline-flex; align-items: center; padding: 4px 10px; border: 1px solid var(--line); border-radius: 6px; text-decoration: none; min-height: 32px; font-size: 14px; }
button.copy { min-height: 0; padding: 0 4px; margin-left: 4px; font-size: 12px; line-height: 1.4; border-color: transparent; background: transparent; color: var(--muted); vertical-align: baseline; }
button.copy:hover, button.copy:focus-visible { border-color: var(--line); color: var(--fg); }
.toolbar { display: flex; gap: 8px; align-items: center; margin-bottom: 6px; }
.toolbar button { min-height: 32px; padding: 2px 10px; font-size: 14px; }
.spacer { flex: 1; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; white-space: nowrap; font-size: 14px; }
th.pick, td.pick { width: 1.5em; padding-right: 0; }
tr.loading td { color: var(--muted); font-style: italic; }
.empty code { background: var(--bg); padding: 1px 4px; border-radius: 4px; }
.empty { white-space: normal; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.id { font-family: ui-monospace, monospace; font-size: 13px; }
.status { font-weight: 600; white-space: nowrap; }
.status.working { color: var(--working); } .status.input_required { color: var(--input_required); }
.status.completed { color: var(--completed); } .status.failed { color: var(--failed); } .status.cancelled { color: var(--cancelled); }
.msg { color: var(--muted); max-width: 360px; overflow-wrap: anywhere; }
td.msg { overflow: hidden; text-overflow: ellipsis; max-width: 320px; }
.progress progress { width: 6em; vertical-align: middle; }
.more { margin-top: 12px; }
.empty { color: var(--muted); padding: 12px 0; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.fields dt { color: var(--muted); } dl.fields dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; max-height: 360px; font-size: 13px; margin: 0; }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; font: 14px/1.5 system-ui, sans-serif; max-height: 480px; }
.content-text { position: relative; margin-bottom: 8px; }
.content-text > button.copy { position: absolute; right: 6px; top: 4px; }
img.content-image { max-width: 100%; max-height: 480px; display: block; margin-bottom: 8px; border: 1px solid var(--line); border-radius: 6px; }
details.json { margin-bottom: 8px; }
details.json summary { cursor: pointer; color: var(--muted); font-size: 13px; margin-bottom: 4px; }
span.id code { font-size: 0.9em; overflow-wrap: anywhere; }
form.answer { display: grid; gap: 8px; max-width: 520px; margin-top: 8px; }
form.answer label.check { flex-direction: row-reverse; justify-content: flex-end; align-items: center; gap: 8px; }
form.answer input[type=checkbox] { min-height: 0; width: 18px; height: 18px; }
textarea { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); }
.hint { color: var(--muted); font-size: 12px; }
ol.messages { margin: 4px 0; padding-left: 20px; }
ol.timeline li.warn { color: var(--input_required); font-weight: 600; }
a.link { margin-left: 4px; }
ol.timeline { list-style: none; padding: 0; margin: 0; }
ol.timeline li { display: grid; grid-template-columns: 11em 6em 1fr; gap: 8px; padding: 4px 0; border-bottom: 1px solid var(--line); }
ol.timeline time, ol.timeline .offset { color: var(--muted); font-variant-numeric: tabular-nums; font-size: 13px; }
.question { border-left: 4px solid var(--input_required); padding-left: 10px; margin: 8px 0; }
.question.offer { border-left-color: var(--working); }
.error { color: var(--failed); }
p.error:empty { display: none; }
dialog { border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); max-width: 420px; }
dialog::backdrop { background: rgba(0, 0, 0, 0.4); }
.actions { display: flex; gap: 8px; justify-content: flex-end; flex-wrap: wrap; }
.actions.start { justify-content: flex-start; }
.skip { color: var(--muted); font-size: 13px; }
.beside { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; align-items: start; }
.beside > section, .side > section { margin-bottom: 12px; }
ol.events { list-style: none; padding: 0; margin: 0; max-height: 420px; overflow: auto; }
ol.events li { display: grid; grid-template-columns: 3em 1fr auto; gap: 4px 8px; padding: 4px 0; border-bottom: 1px solid var(--line); }
ol.events .seq, ol.events time { color: var(--muted); font-variant-numeric: tabular-nums; font-size: 13px; }
ol.events code.type { overflow-wrap: anywhere; }
pre.event-data { grid-column: 1 / -1; max-height: 120px; white-space: pre-wrap; overflow-wrap: anywhere; padding: 4px 6px; }
.subscription { border-left: 4px solid var(--working); padding-left: 10px; margin: 8px 0; }
.subscription .url, td.url { font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere; }
table.deliveries { margin-top: 6px; }
@media (max-width: 1100px) { .beside { grid-template-columns: 1fr; } }
@media (max-width: 700px) {
  main { padding: 8px; }
  table, thead, tbody, tr, td { display: block; }
  thead { display: none; }
  tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; padding: 6px; background: var(--card); }
  td { border: none; padding: 2px 4px; white-space: normal; }
  td.msg { max-width: none; }
  th.pick, td.pick { width: auto; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
  ol.timeline li { grid-template-columns: 1fr; gap: 0; }
  dl.fields { grid-template-columns: 1fr; }
}
`;
