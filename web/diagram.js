// Draws a counterexample (docs/counterexample.md: the `document_json` of a
// Counterexample) as an SVG sequence diagram: one lane per connection, each
// lane a client and a server lifeline (for an intermediary, its origin
// connections follow the clients' as "origin conn K" lanes, the tester's
// origin and the SUT), one arrow per observation in trace
// order (requests to the right, responses to the left), the failing message
// (verdict.label: the rejected response, or the unanswered request of a
// liveness failure) highlighted. Built with DOM calls only: message text is
// never parsed as markup.

const SVG = "http://www.w3.org/2000/svg";
const LANE_W = 380, LANE_GAP = 24, HEAD_H = 30, ROW_H = 30, TOP = 10, LEFT = 10;
const MAX_LABEL = 46;

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

function str(v) { return typeof v === "string" ? v : JSON.stringify(v); }

// One line for a message, like the CLI's diagram: "PUT /a if-match: x",
// "200 etag: \"x\"", else compact JSON.
export function summarize(m) {
  if (m && typeof m === "object" && !Array.isArray(m)) {
    const h = m.headers && typeof m.headers === "object" ? m.headers : {};
    if (m.method !== undefined && m.path !== undefined) {
      let s = `${str(m.method)} ${str(m.path)}`;
      for (const [k, v] of Object.entries(h)) if (k.startsWith("if-")) s += ` ${k}: ${str(v)}`;
      if (typeof m.body === "string" && m.body) s += ` ${JSON.stringify(clip(m.body, 16))}`;
      return s;
    }
    if (typeof m.status === "number") {
      let s = String(m.status);
      if (h.etag !== undefined) s += ` etag: ${str(h.etag)}`;
      if (typeof m.body === "string" && m.body) s += ` ${JSON.stringify(clip(m.body, 16))}`;
      if (m.malformed !== undefined) s += ` MALFORMED ${clip(JSON.stringify(m.malformed), 40)}`;
      return s;
    }
  }
  return clip(JSON.stringify(m), 60);
}

// One line for a message of the fs adapter (docs/adapters.md: fs), as the
// CLI's diagram has it (engine/harness/fs_summary.cc): "write a:f \"1\"",
// "rename a:d -> e", "run"; "ok", "error ENOENT", "exit 2 \"...\"",
// "tree: d/ d/p=\"1\" l->x".
export function summarizeFs(m) {
  if (!m || typeof m !== "object" || Array.isArray(m)) return clip(JSON.stringify(m), 96);
  const q = s => JSON.stringify(clip(typeof s === "string" ? s : "", 16));
  const oct = n => n.toString(8).padStart(4, "0");
  let s = "";
  if (typeof m.op === "string") {
    if (m.op === "run") return "run";
    if (m.op === "list") return `list ${str(m.replica)}`;
    s = `${m.op} ${str(m.replica)}:${str(m.path)}`;
    if (typeof m.data === "string") s += ` ${q(m.data)}`;
    if (m.via === "rename") s += " via rename";
    if (m.op === "rename") s += ` -> ${str(m.to)}`;
    if (m.op === "symlink") s += ` -> ${str(m.target)}`;
    if (Number.isInteger(m.mode)) s += ` ${oct(m.mode)}`;
    if (Number.isInteger(m.mtime)) s += ` mtime ${m.mtime}`;
  } else if (Array.isArray(m.tree)) {
    s = m.tree.length ? "tree:" : "tree: (empty)";
    for (const e of m.tree) {
      if (!e || typeof e !== "object") continue;
      s += ` ${str(e.path)}`;
      if (e.kind === "dir") s += "/";
      if (e.kind === "file") s += `=${q(e.data)}`;
      if (e.kind === "link") s += `->${str(e.target)}`;
      if (e.kind === "other") s += "(other)";
      if (Number.isInteger(e.mode)) s += `(${oct(e.mode)})`;
    }
  } else if (Number.isInteger(m.exit) || Number.isInteger(m.signal) || m.timeout === true) {
    s = Number.isInteger(m.exit) ? `exit ${m.exit}` : Number.isInteger(m.signal) ? `signal ${m.signal}` : "timeout";
    if (typeof m.output === "string" && m.output) s += ` ${q(m.output)}`;
  } else if (typeof m.error === "string") {
    s = `error ${m.error}`;
  } else if (m.ok === true) {
    s = "ok";
  } else {
    s = JSON.stringify(m);
  }
  return clip(s, 96);
}

// Which observation failed: {label, dir, side} ("received" for safety,
// "sent" for liveness, either for a property: odd labels are requests
// sent, even ones responses; side "origin" for a request an intermediary
// sent the tester playing its origin, else "client"), or null.
export function failingOf(doc) {
  const v = doc.verdict || {};
  if (!v.label) return null;
  const side = v.side === "origin" ? "origin" : "client";
  if (v.kind === "safety") return { label: v.label, dir: "received", side };
  if (v.kind === "liveness") return { label: v.label, dir: "sent", side };
  if (v.kind === "property") return { label: v.label, dir: v.label % 2 ? "sent" : "received", side };
  return null;
}

const isOrigin = o => o.side === "origin";

// The <svg> for a parsed counterexample document.
export function sequenceDiagram(doc) {
  const trace = Array.isArray(doc.trace) ? doc.trace : [];
  // The clients' connections, then an intermediary's origin connections
  // (the tester plays the origin: requests the SUT sent it arrive there).
  let clientLanes = 1, originLanes = 0;
  for (const o of trace) {
    if (!Number.isInteger(o.conn)) continue;
    if (isOrigin(o)) originLanes = Math.max(originLanes, o.conn + 1);
    else clientLanes = Math.max(clientLanes, o.conn + 1);
  }
  const lanes = clientLanes + originLanes;
  const laneOf = o => (Number.isInteger(o.conn) ? o.conn : 0) + (isOrigin(o) ? clientLanes : 0);
  const failing = failingOf(doc);
  const width = LEFT * 2 + lanes * LANE_W + (lanes - 1) * LANE_GAP;
  const height = TOP + HEAD_H + 16 + trace.length * ROW_H + 16;
  const svg = el("svg", { class: "seq", width, height, viewBox: `0 0 ${width} ${height}`,
                          role: "img", "aria-label": "sequence diagram" });
  const laneX = c => LEFT + c * (LANE_W + LANE_GAP);
  const clientX = c => laneX(c) + 20, serverX = c => laneX(c) + LANE_W - 20;
  // A cluster's connections each talk to one node: every connection to
  // connect_node, else round-robin (workers/runner).
  const nodes = Number.isInteger(doc.nodes) ? doc.nodes : 1;
  // An fs job's one lane is the tester acting on the replicas and running
  // the program.
  const fs = doc.adapter === "fs";
  const describe = fs ? summarizeFs : summarize;
  const serverOf = c => nodes > 1
    ? `node ${Number.isInteger(doc.connect_node) && doc.connect_node >= 0 ? doc.connect_node : c % nodes}` : "server";
  for (let c = 0; c < lanes; c++) {
    const origin = c >= clientLanes;
    const conn = origin ? c - clientLanes : c;
    const g = el("g", { class: origin ? "lane origin" : "lane", "data-conn": conn });
    const head = el("g", { class: "lane-head" });
    head.append(el("rect", { x: laneX(c), y: TOP, width: LANE_W, height: HEAD_H, rx: 4 }),
                el("text", { x: clientX(c) - 10, y: TOP + 19 }, fs ? "tester" : origin ? `origin conn ${conn}` : `conn ${conn}`),
                el("text", { x: serverX(c) - (fs ? 150 : 44), y: TOP + 19, class: "muted" },
                   fs ? "replicas a, b · program" : origin ? "SUT" : serverOf(c)));
    g.append(head,
             el("line", { class: "lifeline", x1: clientX(c), y1: TOP + HEAD_H, x2: clientX(c), y2: height - 8 }),
             el("line", { class: "lifeline", x1: serverX(c), y1: TOP + HEAD_H, x2: serverX(c), y2: height - 8 }));
    svg.append(g);
  }
  const defs = el("defs");
  for (const [id, color] of [["arrow", "#51606f"], ["arrow-bad", "#c0262d"], ["arrow-ok", "#2f7a55"]]) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.append(el("path", { d: "M0,0 L10,5 L0,10 z", fill: color }));
    defs.append(m);
  }
  svg.prepend(defs);
  trace.forEach((o, i) => {
    const c = laneOf(o);
    const y = TOP + HEAD_H + 16 + i * ROW_H + 18;
    if (o.event) {
      const g = el("g", { class: `event ${o.event}`, "data-label": o.label ?? "" });
      const { event: _e, t: _t, ...fault } = o;
      const text = o.event === "closed" ? "x connection closed"
        : o.event === "fault" ? `⚡ fault ${JSON.stringify(fault)}` : `… #${o.label} timed out`;
      g.append(el("text", { x: clientX(c) + 8, y: y - 4 }, text));
      svg.append(g);
      return;
    }
    const sent = o.dir === "sent";
    const side = isOrigin(o) ? "origin" : "client";
    const isFailing = failing && failing.label === o.label && failing.dir === o.dir && failing.side === side;
    const g = el("g", { class: `msg ${sent ? "sent" : "received"}${isFailing ? " failing" : ""}${isOrigin(o) ? " origin" : ""}`,
                        "data-label": o.label, "data-conn": o.conn ?? 0 });
    const full = `${sent ? "→" : "←"} ${isOrigin(o) ? "o" : ""}#${o.label} ${describe(o.msg)}`;
    if (isFailing) g.append(el("rect", { class: "hl", x: laneX(c) + 2, y: y - 22, width: LANE_W - 4, height: ROW_H - 2, rx: 3 }));
    const [x1, x2] = sent ? [clientX(c), serverX(c)] : [serverX(c), clientX(c)];
    g.append(el("line", { x1, y1: y, x2, y2: y,
                          "marker-end": `url(#${isFailing ? "arrow-bad" : sent ? "arrow" : "arrow-ok"})` }));
    const label = el("text", { x: clientX(c) + 8, y: y - 5 },
                     clip(full, MAX_LABEL) + (isFailing ? (sent ? "  NO RESPONSE" : "  REJECTED") : ""));
    label.append(el("title", {}, full));
    g.append(label);
    svg.append(g);
  });
  return svg;
}
