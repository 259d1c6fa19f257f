// `dualswarm test`: the online tester against a live server.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/progress_line.h"
#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "engine/harness/coverage.h"
#include "engine/harness/coverage_guide.h"
#include "engine/ir/json.h"
#include "engine/lang/spec.h"
#include "util/ready_probe.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/adapters/origin_listener.h"
#include "workers/runner/choice_sites.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"
#include "workers/sut/cluster.h"

namespace dualswarm::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void OnSignal(int) { g_interrupted.store(true); }

// Branches never taken that a passing run lists (--json lists them all).
constexpr size_t kCoverageListed = 10;

const char kTestHelp[] =
    "usage: dualswarm test --spec FILE (--launch CMD | --target HOST:PORT) [options]\n"
    "\n"
    "Generates requests from the spec's `gen request` block, sends them over several\n"
    "connections, and checks every response online. Stops at the first response no\n"
    "execution of the spec explains.\n"
    "\n"
    "options:\n"
    "  --spec FILE            the .dspec spec\n"
    "  --launch CMD           start the SUT: CMD runs under /bin/sh in a fresh directory;\n"
    "                         {port} is replaced by a free loopback port, {dir} by the\n"
    "                         directory; the whole process group is stopped at the end.\n"
    "                         With --adapter fs (a spec's `use fs`) CMD is no server but\n"
    "                         the program each `run` request runs to its end, {a} and {b}\n"
    "                         the replicas' paths, {dir} theirs (docs/adapters.md: fs)\n"
    "  --target HOST:PORT     test a server that is already running\n"
    "  --nodes N              launch N nodes from the --launch template (1-16, default 1);\n"
    "                         each node also gets {node}, {nodes}, {peer_port}, {peers}\n"
    "                         (127.0.0.1:P,... of every node's peer port), {port_K},\n"
    "                         {peer_port_K}, {advertise_port} and {advertise_peer_port}\n"
    "                         (where the others reach this node; docs/clusters.md)\n"
    "  --connect WHERE        with --nodes: round-robin (connection c to node c mod N;\n"
    "                         the default) or a node's number (every connection to it)\n"
    "  --origins N            a spec with an origin role (an intermediary): the tester\n"
    "                         also plays N origin servers (1-16), listening on loopback\n"
    "                         ports the template names {origin_port} (the first) and\n"
    "                         {origin_port_K}; http and jsonl (docs/spec-language.md)\n"
    "  --origin-gen NAME      the origin gen that answers (default: the spec's only one, or\n"
    "                         with several the one named `answer`)\n"
    "  --nemesis FAULTS       inject faults into the launched nodes at times drawn from\n"
    "                         the seed, comma-separated: pause (SIGSTOP a node, SIGCONT it\n"
    "                         later), kill (SIGKILL a node, run its command again later on\n"
    "                         its directory), partition (cut a node off from the\n"
    "                         others through relays in front of every node, heal\n"
    "                         later; needs --nodes 2 or more), split (a minority\n"
    "                         from a majority) and bridge (two halves that reach\n"
    "                         each other only through one node; both need --nodes 3\n"
    "                         or more), slow (delay every message between a node and\n"
    "                         the others by 100 ms); a fault event in the trace for each\n"
    "                         (docs/clusters.md)\n"
    "  --fault-interval MS    mean time from one fault's end to the next (default 1000)\n"
    "  --fault-duration MS    how long a fault lasts (default 300; below --response-timeout)\n"
    "  --adapter A            wire protocol: one of {ADAPTERS} (default: from the spec's\n"
    "                         `use`: http -> http, json -> jsonl, resp -> resp,\n"
    "                         memcached -> memcached, grpc -> grpc, fs -> fs;\n"
    "                         docs/adapters.md)\n"
    "  --descriptor-set FILE  grpc: the services' protobuf descriptor set (protoc\n"
    "                         --descriptor_set_out=FILE --include_imports)\n"
    "  --run-as USER          fs: run the program as USER, who owns the replicas and\n"
    "                         what the tester makes in them, so that mode bits bind it\n"
    "                         (root ignores them; the tester must run as root)\n"
    "  --seed N               random seed (default 1)\n"
    "  --steps N              requests to send (default 1000)\n"
    "  --time S               wall-time budget in seconds (default: none)\n"
    "  --connections N        client connections (default 4)\n"
    "  --max-in-flight N      outstanding requests over all connections (default: connections)\n"
    "  --max-per-connection N outstanding requests per connection (default: no limit but\n"
    "                         --max-in-flight; 1: never pipeline, for servers that do not)\n"
    "  --branch-order O       first | last | random | most-constrained (default first)\n"
    "  --feature-mask M       swarm mask SITE:HEXBITS,... switching off gen alternatives:\n"
    "                         bit i of SITE's entry switches off alternative i of the\n"
    "                         SITE-th oneof/freq (0-based, in order of appearance;\n"
    "                         docs/spec-language.md); a site the spec lacks is an error\n"
    "  --swarm                a random feature mask derived from the seed (and, with\n"
    "                         several --nemesis faults, a random non-empty subset of them)\n"
    "  --coverage-guided      draw 8 candidate requests each time and send the one whose\n"
    "                         spec paths, run from the current model state, reach the most\n"
    "                         branches no earlier request reached (docs/coverage.md); one\n"
    "                         candidate more is concolic: Z3 solves for its random_int and\n"
    "                         random_word values so that it takes a path to a new branch\n"
    "  --no-concolic          with --coverage-guided: only the drawn candidates (to compare)\n"
    "  --response-timeout MS  a response missing this long is a liveness finding (default 5000)\n"
    "  --pool-depth N         a library interface's pools keep values built by at most N\n"
    "                         calls (1-128; default: 8, 16 or 32, drawn from the seed;\n"
    "                         docs/interfaces.md)\n"
    "  --network tcp|sync     network model (default tcp)\n"
    "  --max-frontier N       checker frontier bound (default 1000000)\n"
    "  --max-check-seconds S  most wall time the checker may spend in the run (default 600,\n"
    "                         and never more than --time); past it the run ends\n"
    "                         INCONCLUSIVE, never with a finding\n"
    "  --ready-timeout MS     how long a launched SUT may take to become ready (default 10000)\n"
    "  --ready PROBE          when a launched SUT is ready: tcp (it accepts a connection;\n"
    "                         default) or http:/PATH (GET PATH gets a 2xx, 3xx or 4xx answer)\n"
    "  --no-shrink            report the failing input as found (default: shrink it by\n"
    "                         rerunning candidates against fresh SUTs; needs --launch)\n"
    "  --shrink-reruns N      shrinking budget in reruns (default 500)\n"
    "  --shrink-time S        shrinking budget in seconds (default 60)\n"
    "  --shrink-jobs N        shrinking candidates rerun at once, each against its own\n"
    "                         fresh SUT (1-16, default 2): reruns that wait (a liveness\n"
    "                         timeout, a slow start) overlap; the result is the same\n"
    "  --prelaunch N          the most fresh SUTs launched ahead of the shrinking reruns\n"
    "                         and verification replays that need one, so that a slow\n"
    "                         start overlaps earlier candidates' runs; from --shrink-jobs\n"
    "                         on, more while reruns wait for them (0-16, default: 4 or\n"
    "                         --shrink-jobs if more; 0: each rerun launches its own)\n"
    "  --reset-command CMD    shrinking reruns keep launched SUTs running and run CMD\n"
    "                         (with the launch placeholders: {port}, {dir}, ...) to bring\n"
    "                         one back to a fresh state instead of relaunching it; CMD\n"
    "                         must exit 0 within --ready-timeout, after which the SUT must\n"
    "                         pass its readiness probe (a failure: fresh SUTs from then\n"
    "                         on). The verification replays still launch fresh SUTs\n"
    "  --no-partition-reuse   without --reset-command, for a spec with a `partition`,\n"
    "                         shrinking reruns reuse running SUTs, each rerun's paths or\n"
    "                         keys renamed (suffix ~wN) to partitions no rerun touched;\n"
    "                         this launches a fresh SUT for every rerun instead\n"
    "  --save FILE            write the counterexample JSON (docs/counterexample.md) to FILE,\n"
    "                         for `dualswarm replay FILE`\n"
    "  --save-trace FILE      write everything observed (the unshrunk trace, one\n"
    "                         observation per line) to FILE whatever the outcome, for\n"
    "                         `dualswarm check --trace FILE` (e.g. an inconclusive run\n"
    "                         checked again with a larger budget)\n"
    "  --json                 print the result as one JSON document, the same keys for\n"
    "                         every verdict (docs/counterexample.md); a finding's\n"
    "                         counterexample is its \"counterexample\" field, the spec\n"
    "                         coverage its \"coverage\" field (docs/coverage.md)\n"
    "  --quiet                no progress output (on stderr: redrawn in place on a\n"
    "                         terminal, else one line every 10 s)\n"
    "\n"
    "exit: 0 passed, 1 a finding (safety, liveness, sut-crash, property), 2 bad input, spec error\n"
    "or inconclusive\n";

// The one document `dualswarm test --json` prints for every verdict (passed,
// a finding, inconclusive, spec error): the same keys every time, described
// in docs/counterexample.md ("dualswarm test --json"). `cx_json` is the
// counterexample document of a finding (what --save writes), or empty.
// A library interface's run (docs/interfaces.md): how each law's runs
// ended, and the pools the tester built, as fields of the result's JSON.
std::string InterfaceJson(const workers::JobResult& r) {
  std::string out = ",\"laws\":[";
  for (size_t i = 0; i < r.stats.laws.size(); ++i) {
    const check::LawTally& t = r.stats.laws[i];
    absl::StrAppend(&out, i ? "," : "", "{\"name\":");
    ir::AppendJsonString(t.name, &out);
    absl::StrAppend(&out, ",\"passed\":", t.passed, ",\"aborted\":", t.aborted, ",\"violated\":", t.violated,
                    ",\"set_aside\":", t.set_aside, "}");
  }
  out += "],\"pools\":{";
  if (r.signature) {
    bool first = true;
    for (const auto& [type, size] : r.signature->pool_sizes) {
      if (!first) out += ",";
      first = false;
      ir::AppendJsonString(type, &out);
      absl::StrAppend(&out, ":", size);
    }
    absl::StrAppend(&out, "},\"pool_depth\":", r.signature->depth_limit, ",\"deepest_value\":", r.signature->max_depth,
                    ",\"building_calls\":", r.signature->calls, ",\"law_runs\":", r.signature->law_runs,
                    ",\"values_built\":", r.signature->values_built);
  } else {
    out += "}";
  }
  return out;
}

// The same for people: one line per law, then the pools.
std::string InterfaceReport(const workers::JobResult& r) {
  std::string out;
  for (const check::LawTally& t : r.stats.laws)
    absl::StrAppend(&out, "  law ", t.name, ": ", t.passed, " passed",
                    t.aborted ? absl::StrCat(", ", t.aborted, " aborted (`when` false)") : "",
                    t.set_aside ? absl::StrCat(", ", t.set_aside, " set aside") : "", "\n");
  if (r.signature) {
    out += "  pools:";
    bool first = true;
    for (const auto& [type, size] : r.signature->pool_sizes) {
      absl::StrAppend(&out, first ? " " : ", ", type, " ", size, size == 1 ? " value" : " values");
      first = false;
    }
    absl::StrAppend(&out, first ? " none" : "", "; deepest value ", r.signature->max_depth, " calls (pool depth ",
                    r.signature->depth_limit, "); ", r.signature->calls, " calls built values, ", r.signature->law_runs,
                    " law runs\n");
  }
  return out;
}

std::string ResultJson(const lang::Spec& spec, const workers::JobOptions& o, const workers::JobResult& r,
                       const std::string& cx_json) {
  std::string out = absl::StrCat("{\"kind\":\"", workers::OutcomeName(r.outcome), "\",\"reason\":");
  ir::AppendJsonString(r.reason, &out);
  absl::StrAppend(&out, ",\"spec\":{\"name\":");
  ir::AppendJsonString(spec.name, &out);
  absl::StrAppend(&out, ",\"hash\":\"", spec.content_hash, "\"},\"target\":");
  ir::AppendJsonString(o.launch.empty() ? o.target : o.launch, &out);
  absl::StrAppend(
      &out, ",\"seed\":", o.exec.seed, ",\"branch_order\":\"", check::BranchOrderName(o.exec.checker.branch_order),
      "\",\"feature_mask\":\"", o.exec.mask.ToString(), "\",\"connections\":", o.exec.connections,
      ",\"requests\":", r.sent, ",\"sent\":", r.sent, ",\"received\":", r.received, ",\"faults\":", r.faults,
      ",\"given_up\":", r.given_up, ",\"seconds\":", r.seconds, ",\"checker\":{\"spec_steps\":", r.stats.handler_runs,
      ",\"backtracks\":", r.stats.backtracks, ",\"partitions\":", r.stats.partitions,
      ",\"solver_checks\":", r.stats.solver.checks, ",\"solver_cache_hits\":", r.stats.solver.cache_hits,
      ",\"z3_calls\":", r.stats.solver.z3_calls, ",\"z3_seconds\":", r.stats.solver.z3_seconds,
      ",\"memo_hits\":", r.stats.memo_hits, ",\"restarts\":", r.stats.restarts, ",\"yields\":", r.stats.yields,
      ",\"repairs\":", r.stats.repairs, ",\"check_seconds\":", r.stats.check_seconds,
      ",\"max_observe_seconds\":", r.stats.max_observe_seconds,
      "},\"coverage\":", harness::CoverageToJson(spec, r.covered_branches));
  if (!spec.ast.ops.empty()) out += InterfaceJson(r);
  // A passing run's whole traffic is not printed: input and trace are empty.
  bool passed = r.outcome == workers::Outcome::kPassed;
  out += ",\"input\":[";
  for (size_t i = 0; !passed && i < r.inputs.size(); ++i) {
    const harness::InputItem& item = r.inputs[i];
    if (item.is_fault()) {
      absl::StrAppend(&out, i ? "," : "", "{\"fault\":", ir::ToJson(item.fault), "}");
    } else {
      absl::StrAppend(&out, i ? "," : "", "{\"conn\":", item.conn, ",\"jexpr\":", ir::ToJson(item.jexpr), "}");
    }
  }
  out += "],\"trace\":[";
  for (size_t i = 0; !passed && i < r.trace.size(); ++i)
    absl::StrAppend(&out, i ? "," : "", check::ObservationToJson(r.trace[i]));
  absl::StrAppend(&out, "],\"verdict\":", check::VerdictToJson(r.verdict, &r.stats),
                  ",\"counterexample\":", cx_json.empty() ? "null" : cx_json, "}");
  return out;
}

void PrintTraceTail(const std::vector<check::Observation>& trace, size_t n) {
  size_t from = trace.size() > n ? trace.size() - n : 0;
  if (from > 0) std::printf("  ... %zu earlier observations\n", from);
  for (size_t i = from; i < trace.size(); ++i) {
    const auto& o = trace[i];
    switch (o.kind) {
      case check::Observation::Kind::kSent:
        std::printf("  conn %lld  -> #%lld %s\n", static_cast<long long>(o.conn), static_cast<long long>(o.label),
                    ir::ToJson(o.msg).c_str());
        break;
      case check::Observation::Kind::kReceived:
        std::printf("  conn %lld <-  #%lld %s\n", static_cast<long long>(o.conn), static_cast<long long>(o.label),
                    ir::ToJson(o.msg).c_str());
        break;
      case check::Observation::Kind::kFault:
        std::printf("  fault %s\n", ir::ToJson(o.msg).c_str());
        break;
      default:
        std::printf("  conn %lld  %s\n", static_cast<long long>(o.conn), check::ObservationKindName(o.kind));
    }
  }
}

// The job's options from the test's flags (the spec loaded); an exit code
// when a flag is bad.
std::optional<int> JobOptionsFromFlags(FlagMap& f, const std::shared_ptr<const lang::Spec>& spec,
                                       workers::JobOptions* out) {
  std::string err;
  workers::JobOptions& o = *out;
  o.launch = f.count("launch") ? f["launch"] : "";
  o.target = f.count("target") ? f["target"] : "";
  o.adapter = f.count("adapter") ? f["adapter"] : workers::DefaultAdapterForSchema(spec->schema);
  if (absl::Status s = workers::CheckAdapterKind(o.adapter); !s.ok()) return BadInput(std::string(s.message()));
  if (std::optional<int> bad = AdapterConfigFromFlags(f, &o)) return bad;
  o.exec.max_in_flight = -1;
  if (!NumFlag(f, "seed", 0, INT64_MAX, &o.exec.seed, &err) ||
      !NumFlag(f, "steps", 1, 100'000'000, &o.exec.steps, &err) ||
      !NumFlag(f, "connections", 1, 1024, &o.exec.connections, &err) ||
      !NumFlag(f, "max-in-flight", 1, 100000, &o.exec.max_in_flight, &err) ||
      !NumFlag(f, "max-per-connection", 1, 100000, &o.exec.max_in_flight_per_connection, &err) ||
      !NumFlag(f, "response-timeout", 1, 86'400'000, &o.response_timeout_ms, &err) ||
      !NumFlag(f, "pool-depth", 1, harness::kMaxPoolDepth, &o.exec.pool_max_depth, &err) ||
      !NumFlag(f, "max-frontier", 1, INT64_MAX, &o.exec.checker.max_frontier, &err) ||
      !NumFlag(f, "ready-timeout", 1, 600'000, &o.ready_timeout_ms, &err) ||
      !NumFlag(f, "nodes", 1, workers::kMaxClusterNodes, &o.nodes, &err) ||
      !NumFlag(f, "origins", 1, workers::kMaxOriginEndpoints, &o.origins, &err) ||
      !NumFlag(f, "fault-interval", 1, 3'600'000, &o.nemesis.interval_ms, &err) ||
      !NumFlag(f, "fault-duration", 1, 3'600'000, &o.nemesis.duration_ms, &err))
    return BadInput(err);
  if ((f.count("fault-interval") || f.count("fault-duration")) && !f.count("nemesis"))
    return BadInput("--fault-interval and --fault-duration need --nemesis (which faults to inject)");
  if (f.count("nemesis")) {
    o.nemesis.faults = absl::StrSplit(f["nemesis"], ',', absl::SkipEmpty());
    if (o.nemesis.faults.empty())
      return BadInput(
          absl::StrCat("--nemesis needs at least one fault (", absl::StrJoin(workers::NemesisFaults(), ", "), ")"));
    if (o.launch.empty()) return BadInput("--nemesis needs --launch (faults are injected into nodes the test starts)");
    if (absl::Status s = o.nemesis.Check(o.response_timeout_ms); !s.ok()) return BadInput(std::string(s.message()));
    if (absl::Status s = o.nemesis.CheckNodes(o.nodes); !s.ok()) return BadInput(std::string(s.message()));
  }
  if (f.count("connect") && f["connect"] != "round-robin" &&
      (!absl::SimpleAtoi(f["connect"], &o.connect_node) || o.connect_node < 0 || o.connect_node >= o.nodes))
    return BadInput(absl::StrCat("--connect must be round-robin or a node's number (0 to ", o.nodes - 1, ")"));
  if (f.count("origin-gen")) o.exec.origin_gen = f["origin-gen"];
  if ((f.count("nodes") || f.count("connect")) && o.launch.empty())
    return BadInput("--nodes and --connect need --launch (a cluster the test starts)");
  // A library is called as client code calls it: one call at a time
  // unless asked otherwise (docs/interfaces.md).
  if (!spec->ast.ops.empty() && !f.count("connections")) o.exec.connections = 1;
  if (o.exec.max_in_flight < 0) o.exec.max_in_flight = o.exec.connections;
  if (o.adapter == "fs") o.exec.connections = o.exec.max_in_flight = 1;  // one operation at a time (the runner's rule)
  if (f.count("max-check-seconds") &&
      (!absl::SimpleAtod(f["max-check-seconds"], &o.exec.checker.max_seconds) || !(o.exec.checker.max_seconds > 0)))
    return BadInput("--max-check-seconds must be a positive number of seconds");
  if (f.count("time") && (!absl::SimpleAtod(f["time"], &o.time_budget_s) || o.time_budget_s <= 0))
    return BadInput("--time must be a positive number of seconds");
  if (f.count("branch-order")) {
    auto bo = check::ParseBranchOrder(f["branch-order"]);
    if (!bo.ok()) return BadInput(std::string(bo.status().message()));
    o.exec.checker.branch_order = *bo;
  }
  if (f.count("ready")) {
    if (auto probe = util::ParseReadyProbe(f["ready"]); !probe.ok())
      return BadInput(absl::StrCat("--ready: ", probe.status().message()));
    o.ready_probe = f["ready"];
  }
  if (f.count("network")) o.exec.checker.network = f["network"];
  if (f.count("feature-mask")) {
    auto m = harness::FeatureMask::Parse(f["feature-mask"]);
    if (!m.ok()) return BadInput(std::string(m.status().message()));
    if (auto st = workers::CheckFeatureMask(*spec, *m); !st.ok()) return BadInput(std::string(st.message()));
    o.exec.mask = *m;
  } else if (f.count("swarm")) {
    o.exec.mask = harness::FeatureMask::Random(o.exec.seed, spec->ast.num_choice_sites);
    o.nemesis.faults = workers::SwarmFaults(o.nemesis.faults, o.exec.seed);
  }
  if (f.count("coverage-guided")) o.exec.guide_candidates = harness::kDefaultGuideCandidates;
  if (f.count("no-concolic")) {
    if (!f.count("coverage-guided")) return BadInput("--no-concolic only applies with --coverage-guided");
    o.exec.guide_concolic = false;
  }
  return std::nullopt;
}

// Writes `trace` to `path` in the trace format `dualswarm check` reads.
absl::Status SaveTrace(const std::string& path, const std::vector<check::Observation>& trace) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  for (const check::Observation& o : trace) std::fprintf(out, "%s\n", check::ObservationToJson(o).c_str());
  if (std::fclose(out) != 0) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

int Interrupted() {
  std::fprintf(stderr, "\ndualswarm: interrupted; the SUT was stopped\n");
  return 130;
}

// A finding: shrinks it (unless told not to), saves and prints the
// counterexample. An exit code when that goes wrong.
std::optional<int> ReportFinding(FlagMap& f, const std::shared_ptr<const lang::Spec>& spec,
                                 const workers::JobOptions& o, const workers::JobResult& r, bool json, bool quiet) {
  std::string err;
  workers::ShrinkJobOptions so;
  so.shrink = !f.count("no-shrink");
  so.reuse_by_partition = !f.count("no-partition-reuse");
  if (!NumFlag(f, "shrink-reruns", 0, 1'000'000, &so.max_reruns, &err)) return BadInput(err);
  if (f.count("shrink-time") && (!absl::SimpleAtod(f["shrink-time"], &so.max_seconds) || so.max_seconds < 0))
    return BadInput("--shrink-time must be a non-negative number of seconds");
  so.jobs = 2;
  if (!NumFlag(f, "shrink-jobs", 1, 16, &so.jobs, &err)) return BadInput(err);
  if (!NumFlag(f, "prelaunch", 0, 16, &so.prelaunch, &err)) return BadInput(err);
  if (f.count("reset-command")) {
    if (f["reset-command"].empty() || o.launch.empty())
      return BadInput("--reset-command needs a command and --launch (it resets launched SUTs)");
    if (f["reset-command"].size() > 4096) return BadInput("--reset-command is longer than 4096 bytes");
    if (f["reset-command"].find_first_of(std::string("\r\n\0", 3)) != std::string::npos)
      return BadInput("--reset-command must be one line without NUL bytes");
    if (o.origins > 0 || !o.nemesis.faults.empty())
      return BadInput("--reset-command is not used with --origins or --nemesis (those reruns launch fresh SUTs)");
    so.reset_command = f["reset-command"];
    so.reset_timeout_ms = o.ready_timeout_ms;
  }
  if (so.shrink && o.launch.empty() && !quiet)
    std::fprintf(stderr, "note: not shrinking: shrinking reruns the input against fresh SUTs, which needs --launch\n");
  auto progress = std::make_shared<ProgressLine>(stderr);
  if (so.shrink && !o.launch.empty() && !quiet) {
    std::fprintf(stderr, "%s after %llu requests; shrinking...\n", workers::OutcomeName(r.outcome),
                 static_cast<unsigned long long>(r.sent));
    so.on_progress = [progress](const harness::ShrinkProgress& p) {
      progress->Show(p.replays == 0 ? ShrinkingLine(p.reruns, p.reproduced, p.size, p.flaky)
                                    : VerifyingLine(p.replays, p.replays_planned, p.replays_reproduced));
    };
  }
  auto cx = workers::MakeCounterexample(spec, o, r, so);
  progress->Clear();
  if (!cx.ok() && absl::IsCancelled(cx.status())) return Interrupted();
  if (!cx.ok()) return BadInput(absl::StrCat("shrinking failed: ", cx.status().message()));
  std::string cx_json = harness::CounterexampleToJson(*cx);
  if (f.count("save")) {
    FILE* out = std::fopen(f["save"].c_str(), "w");
    if (out == nullptr) return BadInput(absl::StrCat("cannot write ", f["save"]));
    std::fprintf(out, "%s\n", cx_json.c_str());
    std::fclose(out);
  }
  if (json) {
    std::printf("%s\n", ResultJson(*spec, o, r, cx_json).c_str());
    return std::nullopt;
  }
  std::printf("%s after %llu requests (seed %llu, %.2f s)\n\n%s", workers::OutcomeName(r.outcome),
              static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(o.exec.seed), r.seconds,
              harness::RenderSequenceDiagram(*cx).c_str());
  if (f.count("save"))
    std::printf("saved to %s (replay: dualswarm replay %s --launch ...)\n", f["save"].c_str(), f["save"].c_str());
  return std::nullopt;
}

// ", N faults injected" for a run with a nemesis ("" without one); says so
// when the run ended before the first fault.
std::string FaultsInjected(const workers::JobOptions& o, const workers::JobResult& r) {
  if (o.nemesis.faults.empty()) return "";
  if (r.faults == 0) return ", no fault injected: the run ended before the first one";
  return absl::StrCat(", ", r.faults, r.faults == 1 ? " fault" : " faults", " injected",
                      r.given_up > 0 ? absl::StrCat(", ", r.given_up, " requests given up near them") : "");
}

// A run that passed, or ended without a finding (inconclusive, a spec error).
void ReportOther(const lang::Spec& spec, const workers::JobOptions& o, const workers::JobResult& r, bool json) {
  if (json) {
    std::printf("%s\n", ResultJson(spec, o, r, "").c_str());
  } else if (r.outcome == workers::Outcome::kPassed && !spec.ast.ops.empty()) {
    std::printf(
        "PASSED: %llu calls on %d connection%s, every law of spec '%s' held%s (seed %llu, %.2f s, %.0f calls/s)\n",
        static_cast<unsigned long long>(r.sent), o.exec.connections, o.exec.connections == 1 ? "" : "s",
        spec.name.c_str(), spec.ast.handlers.empty() ? "" : " and every answer was explained",
        static_cast<unsigned long long>(o.exec.seed), r.seconds,
        r.seconds > 0 ? static_cast<double>(r.sent) / r.seconds : 0.0);
    std::printf("%s", InterfaceReport(r).c_str());
  } else if (r.outcome == workers::Outcome::kPassed) {
    const size_t properties = spec.ast.properties.size();
    std::printf(
        "PASSED: %llu requests on %d connections, every response explained by spec '%s'%s "
        "(seed %llu, %.2f s, %.0f requests/s%s)\n",
        static_cast<unsigned long long>(r.sent), o.exec.connections, spec.name.c_str(),
        properties == 0
            ? ""
            : absl::StrCat(" and its ", properties, properties == 1 ? " property" : " properties", " held").c_str(),
        static_cast<unsigned long long>(o.exec.seed), r.seconds,
        r.seconds > 0 ? static_cast<double>(r.sent) / r.seconds : 0.0, FaultsInjected(o, r).c_str());
    std::printf("%s", harness::FormatCoverage(spec, r.covered_branches, kCoverageListed).c_str());
  } else {
    std::printf("%s after %llu requests (seed %llu, %.2f s)\n", workers::OutcomeName(r.outcome),
                static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(o.exec.seed), r.seconds);
    std::printf("trace (most recent last):\n");
    PrintTraceTail(r.trace, 24);
    if ((r.outcome == workers::Outcome::kSafety || r.outcome == workers::Outcome::kProperty) &&
        r.verdict.kind == check::Verdict::Kind::kReject) {
      std::fputs(check::FormatVerdict(r.verdict).c_str(), stdout);
    } else {
      std::printf("%s\n", r.reason.c_str());
    }
  }
}

}  // namespace

int TestCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(workers::WithAdapterKinds(kTestHelp).c_str(), stdout);
    return kExitOk;
  }
  FlagMap f;
  std::string err;
  if (!ParseFlags(args,
                  {"spec",
                   "launch",
                   "target",
                   "adapter",
                   "seed",
                   "steps",
                   "time",
                   "connections",
                   "max-in-flight",
                   "max-per-connection",
                   "branch-order",
                   "feature-mask",
                   "response-timeout",
                   "pool-depth",
                   "network",
                   "max-frontier",
                   "max-check-seconds",
                   "ready-timeout",
                   "ready",
                   "save",
                   "shrink-reruns",
                   "shrink-time",
                   "shrink-jobs",
                   "prelaunch",
                   "reset-command",
                   "descriptor-set",
                   "run-as",
                   "nodes",
                   "connect",
                   "nemesis",
                   "fault-interval",
                   "fault-duration",
                   "save-trace",
                   "origins",
                   "origin-gen"},
                  {"json", "quiet", "swarm", "no-shrink", "no-partition-reuse", "coverage-guided", "no-concolic"}, &f,
                  &err))
    return BadInput(absl::StrCat(err, "\n\n", workers::WithAdapterKinds(kTestHelp)));
  if (!f.count("spec")) return BadInput(absl::StrCat("test needs --spec\n\n", workers::WithAdapterKinds(kTestHelp)));
  if (f.count("launch") == f.count("target"))
    return BadInput("test needs exactly one of --launch CMD or --target HOST:PORT");
  auto spec = lang::LoadSpecFile(f["spec"]);
  if (!spec.ok()) return BadInput(absl::StrCat("spec rejected:\n", spec.status().message()));
  workers::JobOptions o;
  if (std::optional<int> bad = JobOptionsFromFlags(f, *spec, &o)) return *bad;
  bool json = f.count("json") > 0;
  bool quiet = f.count("quiet") > 0 || json;
  auto progress = std::make_shared<ProgressLine>(stderr);
  if (!quiet) {
    o.on_progress = [progress](const workers::JobProgress& p) {
      progress->Show(absl::StrFormat(
          "  %6.1fs  sent %llu/%llu  received %llu  frontier %zu", p.seconds, static_cast<unsigned long long>(p.sent),
          static_cast<unsigned long long>(p.steps_budget), static_cast<unsigned long long>(p.received), p.frontier));
    };
  }
  // SIGINT/SIGTERM end the run cleanly: the SUT's process group is stopped.
  o.cancel = &g_interrupted;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  auto r = workers::RunJob(*spec, o);
  if (!r.ok() && absl::IsCancelled(r.status())) return Interrupted();
  progress->Clear();
  if (!r.ok()) return BadInput(std::string(r.status().message()));
  if (f.count("save-trace")) {
    if (absl::Status s = SaveTrace(f["save-trace"], r->trace); !s.ok()) return BadInput(std::string(s.message()));
  }
  if (workers::IsSutFault(r->outcome)) {
    if (std::optional<int> failed = ReportFinding(f, *spec, o, *r, json, quiet)) return *failed;
  } else {
    ReportOther(**spec, o, *r, json);
  }
  return workers::IsSutFault(r->outcome)           ? kExitRejected
         : r->outcome == workers::Outcome::kPassed ? kExitOk
                                                   : kExitBadInput;
}

}  // namespace dualswarm::cli
