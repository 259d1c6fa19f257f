// The Dualswarm web UI: pages routed by the URL fragment, data from the
// coordinator's JSON API (/api/v1: the protobuf JSON mapping of the gRPC
// messages, docs/web.md). The bearer token is typed in once and kept in
// localStorage; every request sends it as "Authorization: Bearer TOKEN".
// Pages of runs that are still going poll every 2 s. DOM is built with
// createElement/textContent only, so nothing from the API is parsed as HTML.
import { sequenceDiagram } from "./diagram.js";

const TOKEN_KEY = "dualswarm.token";
const POLL_MS = 2000;
const FINAL = new Set(["RUN_STATE_PASSED", "RUN_STATE_FAILED", "RUN_STATE_CANCELLED", "RUN_STATE_ERROR"]);
const main = document.getElementById("main");
let pollTimer = null;
let renderSeq = 0;  // a newer navigation makes older async renders stop

// ------------------------------------------------------------ helpers

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const short = (s, n = 12) => (s || "").slice(0, n);
const lower = (e, prefix) => (e || "").replace(prefix, "").toLowerCase().replace(/_/g, "-");
const runState = s => lower(s, "RUN_STATE_");
const jobState = s => lower(s, "JOB_STATE_");
const kindName = s => lower(s, "VERDICT_KIND_");
const orderName = s => lower(s, "BRANCH_ORDER_");

function time(ts) {
  if (!ts) return "—";
  const d = new Date(ts);
  return isNaN(d) ? ts : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

function badge(state, kind = "run") {
  const name = kind === "run" ? runState(state) : jobState(state);
  return h("span", { class: `state state-${name}`, "data-state": name }, name || "?");
}

function progress(counts) {
  const c = counts || {};
  const total = c.total || 0;
  const bar = h("span", { class: "progress", title: `${done(c)}/${total} done` });
  let left = 0;
  for (const k of ["passed", "failed", "error", "cancelled", "leased"]) {
    const n = c[k] || 0;
    if (!n || !total) continue;
    const s = h("span", { class: `p-${k}` });
    s.style.left = `${(100 * left) / total}%`;
    s.style.width = `${(100 * n) / total}%`;
    bar.append(s);
    left += n;
  }
  return h("span", {}, bar, " ", h("span", { class: "progress-text" }, `${done(c)}/${total}`));
}

const done = c => (c.passed || 0) + (c.failed || 0) + (c.error || 0) + (c.cancelled || 0);

function banner(text, isError) {
  const b = document.getElementById("banner");
  b.hidden = !text;
  b.className = isError ? "error" : "";
  b.textContent = text || "";
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path) {
  const headers = { Accept: "application/json" };
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(`/api/v1/${path}`, { headers });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (!resp.ok) {
    const code = (body && body.code) || `HTTP ${resp.status}`;
    const msg = (body && body.message) || resp.statusText;
    if (resp.status === 401) banner(`${code}: ${msg} — enter a token (dualswarm-coordinator token create --role submitter) above.`, true);
    throw new ApiError(resp.status, code, msg);
  }
  return body;
}

function errorBox(e) {
  return h("div", { class: "card error-box" }, h("strong", {}, e.code || "error"), ": ", e.message);
}

function schedule(fn) {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(fn, POLL_MS);
}

// Fetches every page of a list (at most `limit` items).
async function all(path, field, limit = 2000) {
  const items = [];
  let token = "";
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page = await api(`${path}${sep}page_size=500${token ? `&page_token=${encodeURIComponent(token)}` : ""}`);
    items.push(...(page[field] || []));
    token = page.nextPageToken;
  } while (token && items.length < limit);
  return items;
}

// ------------------------------------------------------------ pages

// Targets by id, for names in tables (cached per page load).
let targetNames = null;
async function targetName(id) {
  if (!targetNames) {
    targetNames = new Map();
    try { for (const t of await all("targets", "targets")) targetNames.set(String(t.id), t.name); } catch (e) { /* shown elsewhere */ }
  }
  return targetNames.get(String(id)) || `target ${id}`;
}

async function runsPage(seq, params) {
  const state = params.get("state") || "";
  const spec = params.get("spec") || "";
  const target = params.get("target") || "";
  const form = h("form", { class: "filters", id: "run-filters", onsubmit: ev => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(ev.target)) if (v) q.set(k, v);
    location.hash = `#/runs${q.toString() ? "?" + q : ""}`;
  } },
    h("label", {}, "state", h("select", { name: "state", id: "filter-state" },
      ["", "queued", "running", "passed", "failed", "cancelled", "error"].map(s =>
        h("option", { value: s, selected: s === state }, s || "any")))),
    h("label", {}, "spec hash", h("input", { name: "spec", value: spec, size: 16 })),
    h("label", {}, "target id", h("input", { name: "target", value: target, size: 6 })),
    h("button", { type: "submit" }, "Filter"));
  const q = new URLSearchParams();
  if (state) q.set("state", state);
  if (spec) q.set("spec_hash", spec);
  if (target) q.set("target_id", target);
  q.set("page_size", "100");
  const data = await api(`runs?${q}`);
  if (seq !== renderSeq) return;
  const rows = [];
  for (const r of data.runs || []) {
    rows.push(h("tr", { class: "run-row", "data-run": r.id },
      h("td", { class: "num" }, h("a", { href: `#/runs/${r.id}` }, r.id)),
      h("td", {}, badge(r.state)),
      h("td", {}, progress(r.counts)),
      h("td", { class: "num findings" }, r.findings),
      h("td", {}, h("a", { href: `#/specs/${r.template.specHash}`, class: "mono" }, short(r.template.specHash))),
      h("td", {}, await targetName(r.template.targetId)),
      h("td", {}, r.submittedBy),
      h("td", {}, r.campaignId !== "0" ? h("a", { href: `#/campaigns` }, `campaign ${r.campaignId}`) : ""),
      h("td", {}, time(r.createdAt))));
  }
  if (seq !== renderSeq) return;
  main.replaceChildren(
    h("h1", {}, "Runs"), form,
    rows.length ? h("table", { id: "runs" },
      h("thead", {}, h("tr", {}, ["id", "state", "progress", "findings", "spec", "target", "by", "campaign", "submitted"].map(t => h("th", {}, t)))),
      h("tbody", {}, rows))
      : h("p", { class: "muted", id: "no-runs" }, "No runs match. Submit one with: dualswarm run submit --spec-name NAME --target T --jobs N"));
  if ((data.runs || []).some(r => !FINAL.has(r.state))) schedule(() => seq === renderSeq && runsPage(seq, params));
}

async function runPage(seq, id) {
  const [run, findings] = await Promise.all([api(`runs/${id}`), api(`findings?run_id=${id}&page_size=100`)]);
  const jobs = await all(`runs/${id}/jobs`, "jobs", 5000);
  let target = null;
  try { target = await api(`targets/${run.template.targetId}`); } catch (e) { /* the summary says "target N" */ }
  if (seq !== renderSeq) return;
  const t = run.template;
  const faulted = target && target.nemesis;
  const b = t.budget || {};
  const summary = h("div", { class: "card" }, h("dl", { class: "kv" },
    h("dt", {}, "state"), h("dd", { id: "run-state" }, badge(run.state), run.error ? ` ${run.error}` : ""),
    h("dt", {}, "progress"), h("dd", {}, progress(run.counts), " ",
      h("span", { class: "muted", id: "run-counts" },
        `queued ${run.counts.queued}, leased ${run.counts.leased}, passed ${run.counts.passed}, failed ${run.counts.failed}, error ${run.counts.error}, cancelled ${run.counts.cancelled}`)),
    h("dt", {}, "spec"), h("dd", {}, h("a", { href: `#/specs/${t.specHash}`, class: "mono" }, t.specHash)),
    h("dt", {}, "target"), h("dd", {}, await targetName(t.targetId)),
    h("dt", {}, "jobs / seed"), h("dd", {}, `${t.jobs} jobs, base seed ${t.seed}, gen ${t.gen || "request"}${t.stopAtFirstFinding ? ", stops at the first finding" : ""}`),
    h("dt", {}, "budget"), h("dd", {}, `${b.steps} steps, ${b.connections} connections, ${b.maxInFlight} in flight, response timeout ${b.responseTimeoutMs} ms, network ${b.network}${b.timeBudgetMs !== "0" ? `, ${b.timeBudgetMs} ms per job` : ""}${(b.guideCandidates || 0) > 1 ? `, coverage-guided (${b.guideCandidates} candidates)` : ""}`),
    ...(faulted ? [h("dt", {}, "faults"), h("dd", { id: "run-faults" },
      `${nemesisText(target)}; ${jobs.reduce((n, j) => n + Number(j.faults || 0), 0)} injected in completed jobs`)] : []),
    h("dt", {}, "submitted"), h("dd", {}, `${time(run.createdAt)} by ${run.submittedBy}`),
    h("dt", {}, "started / finished"), h("dd", {}, `${time(run.startedAt)} / ${time(run.finishedAt)}`)));
  const fl = findings.findings || [];
  const findingTable = fl.length ? h("table", { id: "run-findings" },
    h("thead", {}, h("tr", {}, ["finding", "kind", "count", "signature", "reason"].map(x => h("th", {}, x)))),
    h("tbody", {}, fl.map(f => h("tr", {},
      h("td", { class: "num" }, h("a", { href: `#/findings/${f.id}`, class: "finding-link" }, `finding ${f.id}`)),
      h("td", {}, kindName(f.kind)), h("td", { class: "num" }, f.count),
      h("td", { class: "mono" }, f.signature), h("td", { class: "reason" }, (f.reason || "").split("\n")[0])))))
    : h("p", { class: "muted" }, FINAL.has(run.state) ? "No findings." : "No findings yet.");
  const jobTable = h("table", { id: "jobs" },
    h("thead", {}, h("tr", {}, ["#", "state", "seed", "branch order", "feature mask", "attempts", "worker",
      ...(faulted ? ["faults"] : []), "outcome", "reason"].map(x => h("th", {}, x)))),
    h("tbody", {}, jobs.map(j => h("tr", { class: "job-row", "data-job": j.id, "data-state": jobState(j.state) },
      h("td", { class: "num" }, j.index), h("td", {}, badge(j.state, "job")),
      h("td", { class: "mono" }, j.seed), h("td", {}, orderName(j.branchOrder)),
      h("td", { class: "mono" }, j.featureMask || "all"), h("td", { class: "num" }, j.attempts),
      h("td", { class: "mono" }, short(j.workerId, 8)),
      ...(faulted ? [h("td", { class: "num job-faults" }, Number(j.faults || 0))] : []), h("td", {}, j.outcome),
      h("td", { class: "reason" }, (j.reason || "").split("\n")[0])))));
  let coverage = null;
  try { coverage = await api(`runs/${id}/coverage`); } catch (e) { /* older coordinator: no section */ }
  if (seq !== renderSeq) return;
  main.replaceChildren(h("h1", {}, `Run ${run.id}`), summary,
    h("h2", {}, "Findings"), findingTable,
    ...(coverage ? [h("h2", {}, "Spec coverage"), coverageCard(coverage, `run=${run.id}`)] : []),
    h("h2", {}, `Jobs (${jobs.length})`), jobTable);
  if (!FINAL.has(run.state)) schedule(() => seq === renderSeq && runPage(seq, id));
}

// An explore run's finding: a violation in the spec, found with no SUT
// (docs/explore.md); its input is the request sequence that leads to it.
const explored = doc => doc.adapter === "explore";

function replayCommand(finding, cx, doc) {
  const spec = (doc.spec && doc.spec.file) || "SPEC.dspec";
  const launch = doc.target || "CMD";
  const q = s => `'${String(s).replace(/'/g, `'\\''`)}'`;
  if (explored(doc)) return `dualswarm explore --spec ${q(spec)} --depth ${(doc.input || []).length}`;
  return `dualswarm finding show ${finding.id} --save cx.json && dualswarm replay cx.json --spec ${q(spec)} --launch ${q(launch)}`;
}

// Milliseconds as seconds with one decimal, cut (not rounded) as the
// tests compute it.
const seconds = ms => `${Math.floor(ms / 1000)}.${Math.floor(ms % 1000 / 100)}`;

// How a counterexample was shrunk and how often it replayed, as the CLI
// prints it (docs/counterexample.md): a budget that ran out says so.
function shrinkSummary(doc) {
  const s = doc.shrink || {}, r = doc.replays || {};
  const parts = [!s.reruns ? `Not shrunk (${doc.original_size} items).`
    : `Shrunk from ${doc.original_size} to ${doc.shrunk_size} items in ${s.reruns} reruns ` +
      `(${seconds(s.milliseconds || 0)} s): ${s.complete ? "complete" : "stopped by its budget"}.`];
  if (doc.repeat > 1)
    parts.push(`Sent ${doc.repeat} times over in one run (a rare race); the diagram is round ` +
      `${(doc.failed_round || 0) + 1}, where it failed.`);
  if (r.verified)
    parts.push(`Replayed on fresh SUTs: ${r.reproduced || 0} of ${r.verified} reproduced` +
      `${(r.reproduced || 0) < r.verified ? " (flaky: the failure depends on timing)" : ""}.`);
  return parts.join(" ");
}

async function findingPage(seq, id) {
  const f = await api(`findings/${id}?max_counterexamples=10`);
  if (seq !== renderSeq) return;
  const cx = (f.counterexamples || [])[0];
  const parts = [h("h1", {}, `Finding ${f.id}: ${kindName(f.kind)}`),
    h("div", { class: "card" }, h("dl", { class: "kv" },
      h("dt", {}, "reason"), h("dd", { class: "reason", id: "finding-reason" }, f.reason),
      h("dt", {}, "signature"), h("dd", { class: "mono" }, f.signature),
      h("dt", {}, "count"), h("dd", {}, `${f.count} counterexample${f.count === "1" ? "" : "s"}`),
      h("dt", {}, "spec"), h("dd", {}, h("a", { href: `#/specs/${f.specHash}`, class: "mono" }, f.specHash)),
      h("dt", {}, "target"), h("dd", {}, await targetName(f.targetId)),
      h("dt", {}, "seen"), h("dd", {}, `${time(f.firstSeen)} … ${time(f.lastSeen)}`)))];
  if (!cx) {
    parts.push(h("p", { class: "muted" }, "No counterexample stored."));
  } else {
    parts.push(h("h2", {}, `Smallest counterexample ${cx.id}`),
      h("p", {}, `Run `, h("a", { href: `#/runs/${cx.runId}` }, cx.runId), `, job ${cx.jobId}, seed ${cx.seed}, branch order ${orderName(cx.branchOrder)}, feature mask ${cx.featureMask || "all"}, ${cx.size} requests (${cx.unshrunkSize} before shrinking).`));
    let doc = null;
    try { doc = cx.documentJson ? JSON.parse(cx.documentJson) : null; } catch (e) { doc = null; }
    if (doc) {
      parts.push(h("p", { id: "shrink-summary", class: doc.shrink && doc.shrink.reruns && !doc.shrink.complete ? "budget-out" : "" },
        shrinkSummary(doc)));
      parts.push(h("div", { class: "diagram", id: "diagram" }, explored(doc)
        ? h("pre", {}, (doc.input || []).map((item, k) => ` --> #${2 * k + 1} ${JSON.stringify(item.jexpr)}`).join("\n"))
        : sequenceDiagram(doc)));
      const v = doc.verdict || {};
      parts.push(h("div", { class: "card" },
        h("div", { class: "reason", id: "verdict-reason" }, `${v.kind}: ${v.reason}`),
        (v.details || []).length ? h("ul", { id: "verdict-details" }, v.details.map(d => h("li", {}, d))) : null));
      const cmd = replayCommand(f, cx, doc);
      const pre = h("pre", { id: "replay-command" }, cmd);
      parts.push(h("h2", {}, explored(doc) ? "Reproduce (in the spec: no SUT ran)" : "Replay"), h("div", { class: "replay" }, pre,
        h("button", { type: "button", id: "copy-replay", onclick: async ev => {
          try { await navigator.clipboard.writeText(cmd); ev.target.textContent = "Copied"; }
          catch (e) {  // no clipboard permission: select the text instead
            const r = document.createRange(); r.selectNodeContents(pre);
            getSelection().removeAllRanges(); getSelection().addRange(r);
            ev.target.textContent = "Press Ctrl+C";
          }
        } }, "Copy")),
        h("p", { class: "muted" }, "If the spec file is not on your machine: dualswarm spec show ", f.specHash, " --source > spec.dspec, and pass --spec spec.dspec."));
    } else {
      parts.push(h("p", { class: "muted" }, "This counterexample was reported without its document; its stored fields:"),
        h("pre", { class: "card" }, `${kindName(cx.kind)}: ${cx.reason}\n${cx.diff}\ninput: ${cx.inputJson}\ntrace:\n${cx.traceJson}`));
    }
    if ((f.counterexamples || []).length > 1)
      parts.push(h("h2", {}, "Other counterexamples"), h("table", {},
        h("thead", {}, h("tr", {}, ["id", "run", "job", "seed", "size"].map(x => h("th", {}, x)))),
        h("tbody", {}, f.counterexamples.slice(1).map(c => h("tr", {},
          h("td", { class: "num" }, c.id), h("td", { class: "num" }, h("a", { href: `#/runs/${c.runId}` }, c.runId)),
          h("td", { class: "num" }, c.jobId), h("td", { class: "mono" }, c.seed), h("td", { class: "num" }, c.size))))));
  }
  main.replaceChildren(...parts);
}

async function specsPage(seq) {
  const specs = await all("specs", "specs", 1000);
  if (seq !== renderSeq) return;
  main.replaceChildren(h("h1", {}, "Specs"), specs.length ? h("table", { id: "specs" },
    h("thead", {}, h("tr", {}, ["hash", "name", "file", "choice sites", "uploaded"].map(x => h("th", {}, x)))),
    h("tbody", {}, specs.map(s => h("tr", {},
      h("td", {}, h("a", { href: `#/specs/${s.hash}`, class: "mono" }, short(s.hash, 16))),
      h("td", {}, s.name), h("td", {}, s.fileName), h("td", { class: "num" }, s.choiceSites), h("td", {}, time(s.createdAt))))))
    : h("p", { class: "muted" }, "No specs yet: dualswarm spec push FILE"));
}

// Spec coverage (docs/coverage.md): "N of M branches (P %)", the branches
// never taken, and a link to the spec source with them marked. `query`
// says whose coverage it is: "run=ID" or "campaign=ID".
function coverageCard(c, query) {
  const total = Number(c.total || 0), covered = Number(c.covered || 0);
  if (!c.specHash) return h("p", { class: "muted", id: "coverage" }, "No coverage yet.");
  const missed = (c.branches || []).filter(b => !b.covered);
  return h("div", { class: "card", id: "coverage" },
    h("p", {}, h("span", { id: "coverage-summary" },
      `${covered} of ${total} branches covered (${total ? Math.floor(100 * covered / total) : 100} %)`),
      ` by ${c.jobs || 0} completed jobs — `,
      h("a", { href: `#/specs/${c.specHash}?${query}`, id: "coverage-source" }, "show them on the spec source")),
    missed.length ? h("table", { id: "coverage-missed" },
      h("thead", {}, h("tr", {}, ["never taken", "in", "branch"].map(x => h("th", {}, x)))),
      h("tbody", {}, missed.slice(0, 50).map(b => h("tr", {},
        h("td", { class: "mono" }, h("a", { href: `#/specs/${c.specHash}?${query}` }, `${b.line}:${b.column}`)),
        h("td", {}, b.scope), h("td", {}, b.label)))))
      : h("p", { class: "muted" }, "Every branch was taken."));
}

// The spec's source, one row per line; with `?run=ID` or `?campaign=ID`,
// each line that starts branches is marked covered (every one taken),
// uncovered (none) or partly, with the branches in its title.
async function specPage(seq, hash, params) {
  const s = await api(`specs/${encodeURIComponent(hash)}`);
  // Only ids: a crafted link must not steer the page's API calls elsewhere.
  const id = k => /^[0-9]{1,19}$/.test(params.get(k) || "") ? params.get(k) : null;
  const whose = id("run") ? `runs/${id("run")}` : id("campaign") ? `campaigns/${id("campaign")}` : null;
  let coverage = null, coverageError = null;
  if (whose) {
    try { coverage = await api(`${whose}/coverage`); } catch (e) { coverageError = e; }
    if (coverage && coverage.specHash !== s.hash) {
      coverageError = new Error(`its coverage is of spec ${short(coverage.specHash)}, not this version`);
      coverage = null;
    }
  }
  if (seq !== renderSeq) return;
  const lines = s.source.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const byLine = new Map();
  for (const b of (coverage ? coverage.branches : []) || []) {
    if (!byLine.has(b.line)) byLine.set(b.line, []);
    byLine.get(b.line).push(b);
  }
  const mark = n => {
    const bs = byLine.get(n);
    if (!bs) return {};
    const hit = bs.filter(b => b.covered).length;
    return {
      class: hit === bs.length ? "cov-all" : hit === 0 ? "cov-none" : "cov-some",
      title: bs.map(b => `${b.covered ? "covered" : "never taken"}: ${b.scope}: ${b.label} (column ${b.column})`).join("\n"),
      "data-branches": `${hit}/${bs.length}`,
    };
  };
  main.replaceChildren(h("h1", {}, `Spec ${s.name}`),
    h("div", { class: "card" }, h("dl", { class: "kv" },
      h("dt", {}, "hash"), h("dd", { class: "mono" }, s.hash),
      h("dt", {}, "file"), h("dd", {}, s.fileName),
      h("dt", {}, "choice sites"), h("dd", {}, s.choiceSites),
      h("dt", {}, "uploaded"), h("dd", {}, time(s.createdAt)),
      ...(coverageError ? [h("dt", {}, "coverage"), h("dd", { id: "spec-coverage-error", class: "muted" },
        `not shown for ${whose.replace("s/", " ")}: ${coverageError.message}`)] : []),
      ...(coverage ? [h("dt", {}, "coverage"), h("dd", { id: "spec-coverage" },
        `${coverage.covered || 0} of ${coverage.total || 0} branches covered by ${whose.replace("s/", " ")}; `,
        h("span", { class: "cov-all" }, "all taken"), " ", h("span", { class: "cov-some" }, "some taken"), " ",
        h("span", { class: "cov-none" }, "none taken"))] : []))),
    h("div", { class: "source" }, h("table", { id: "source" }, h("tbody", {},
      lines.map((l, i) => {
        const m = mark(i + 1);
        return h("tr", { id: `L${i + 1}`, ...m }, h("td", { class: "ln" }, i + 1),
          coverage ? h("td", { class: "cov" }, m["data-branches"] || "") : null, h("td", {}, l));
      })))));
}

// A cluster target's nodes and where connections go ("3 nodes, round-robin");
// "" for a single server. connectNode is absent for round-robin.
function clusterText(t) {
  const n = Number(t.nodes || 1);
  if (n <= 1) return "";
  return `${n} nodes, ` + (t.connectNode === undefined ? "round-robin" : `all connections to node ${t.connectNode}`);
}

// A cluster target's nemesis ("pause,kill: a fault every ~1000 ms for 300 ms");
// "none" without one (docs/clusters.md).
function nemesisText(t) {
  if (!t.nemesis) return "none";
  return `${t.nemesis}: a fault every ~${Number(t.faultIntervalMs || 0) || 1000} ms for ${Number(t.faultDurationMs || 0) || 300} ms`;
}

async function targetsPage(seq) {
  const targets = await all("targets", "targets", 1000);
  if (seq !== renderSeq) return;
  main.replaceChildren(h("h1", {}, "Targets"), targets.length ? h("table", { id: "targets" },
    h("thead", {}, h("tr", {}, ["id", "name", "adapter", "launch / address", "nodes", "nemesis", "origins", "readiness", "labels"].map(x => h("th", {}, x)))),
    h("tbody", {}, targets.map(t => h("tr", {},
      h("td", { class: "num" }, t.id), h("td", {}, t.name),
      h("td", {}, t.adapter + (Number(t.descriptorSetSize) > 0 ? ` (descriptor set ${t.descriptorSetSize} bytes)` : "")
        + (t.runAs ? ` (as ${t.runAs})` : "")),
      h("td", { class: "mono" }, t.launch || t.address,
        t.resetCommand ? h("div", { class: "muted reset-command" }, `shrinking reruns reset by: ${t.resetCommand}`) : null),
      h("td", {}, clusterText(t)),
      h("td", {}, t.nemesis ? nemesisText(t) : ""),
      h("td", { class: "num" }, Number(t.origins || 0) > 0 ? String(t.origins) : ""),
      h("td", {}, t.readiness ? t.readiness.probe || "tcp" : ""),
      h("td", {}, (t.labels || []).join(", "))))))
    : h("p", { class: "muted" }, "No targets yet: dualswarm target add NAME ... (admin)"));
}

async function campaignsPage(seq) {
  let campaigns;
  try {
    campaigns = await all("campaigns", "campaigns", 1000);
  } catch (e) {
    if (e.status === 501) {
      main.replaceChildren(h("h1", {}, "Campaigns"), h("p", { id: "campaigns-unavailable" },
        "This coordinator does not serve CampaignService yet; campaigns will be listed here when it does."));
      return;
    }
    throw e;
  }
  if (seq !== renderSeq) return;
  const parts = [h("h1", {}, "Campaigns")];
  if (!campaigns.length) parts.push(h("p", { class: "muted" }, "No campaigns yet: dualswarm campaign create ..."));
  for (const c of campaigns) {
    const t = c.template || {};
    let history = [];
    try { history = (await api(`campaigns/${c.id}/runs?page_size=20`)).runs || []; } catch (e) { history = null; }
    let coverage = null;
    try { coverage = await api(`campaigns/${c.id}/coverage`); } catch (e) { /* older coordinator */ }
    if (seq !== renderSeq) return;
    parts.push(h("div", { class: "card campaign", "data-campaign": c.id },
      h("h2", {}, `${c.name} `, h("span", { class: `state ${c.paused ? "state-cancelled" : "state-running"}` }, c.paused ? "paused" : "active")),
      h("dl", { class: "kv" },
        h("dt", {}, "schedule (UTC)"), h("dd", { class: "mono" }, c.cron),
        h("dt", {}, "next fire"), h("dd", {}, c.paused ? "— (paused)" : time(c.nextFireAt)),
        h("dt", {}, "last fired"), h("dd", {}, c.lastFiredAt ? `${time(c.lastFiredAt)}` : "never"),
        h("dt", {}, "spec"), h("dd", {}, c.specName ? `latest version of ${c.specName}` : h("a", { href: `#/specs/${t.specHash}`, class: "mono" }, short(t.specHash))),
        h("dt", {}, "target / jobs"), h("dd", {}, `${await targetName(t.targetId)}, ${t.jobs} jobs`),
        c.lastError ? [h("dt", {}, "last error"), h("dd", { class: "reason" }, c.lastError)] : null,
        coverage && coverage.specHash ? [h("dt", {}, "spec coverage"), h("dd", { class: "campaign-coverage" },
          `${coverage.covered || 0} of ${coverage.total || 0} branches over its runs of this version — `,
          h("a", { href: `#/specs/${coverage.specHash}?campaign=${c.id}` }, "show"))] : null),
      history === null ? h("p", { class: "muted" }, "History unavailable.") :
      history.length ? h("table", { class: "campaign-runs" },
        h("thead", {}, h("tr", {}, ["run", "state", "progress", "findings", "new", "gone", "submitted"].map(x => h("th", {}, x)))),
        h("tbody", {}, history.map(cr => h("tr", {},
          h("td", { class: "num" }, h("a", { href: `#/runs/${cr.run.id}` }, cr.run.id)),
          h("td", {}, badge(cr.run.state)), h("td", {}, progress(cr.run.counts)),
          h("td", { class: "num" }, (cr.findingIds || []).length),
          h("td", {}, (cr.newFindingIds || []).map(f => h("a", { href: `#/findings/${f}` }, `#${f} `))),
          h("td", {}, (cr.goneFindingIds || []).map(f => h("a", { href: `#/findings/${f}` }, `#${f} `))),
          h("td", {}, time(cr.run.createdAt))))))
      : h("p", { class: "muted" }, "Not fired yet.")));
  }
  main.replaceChildren(...parts);
}

// ------------------------------------------------------------ routing

async function route() {
  clearTimeout(pollTimer);
  const seq = ++renderSeq;
  const [path, query] = (location.hash.replace(/^#/, "") || "/runs").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean);
  for (const a of document.querySelectorAll("nav a"))
    a.classList.toggle("active", a.dataset.nav === (parts[0] === "findings" ? "runs" : parts[0]));
  banner("");
  try {
    if (parts[0] === "runs" && parts[1]) await runPage(seq, parts[1]);
    else if (parts[0] === "findings" && parts[1]) await findingPage(seq, parts[1]);
    else if (parts[0] === "specs" && parts[1]) await specPage(seq, parts[1], params);
    else if (parts[0] === "specs") await specsPage(seq);
    else if (parts[0] === "targets") await targetsPage(seq);
    else if (parts[0] === "campaigns") await campaignsPage(seq);
    else await runsPage(seq, params);
    document.title = `Dualswarm — ${main.querySelector("h1")?.textContent || ""}`;
  } catch (e) {
    if (seq === renderSeq) main.replaceChildren(errorBox(e));
  }
}

function tokenUi() {
  const input = document.getElementById("token-input");
  const state = document.getElementById("token-state");
  const show = () => { state.textContent = localStorage.getItem(TOKEN_KEY) ? "token set" : "no token"; };
  document.getElementById("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const t = input.value.trim();
    if (t) localStorage.setItem(TOKEN_KEY, t);
    input.value = "";
    show();
    targetNames = null;
    route();
  });
  document.getElementById("token-forget").addEventListener("click", () => {
    localStorage.removeItem(TOKEN_KEY);
    show();
    route();
  });
  show();
}

window.addEventListener("hashchange", route);
tokenUi();
route();
