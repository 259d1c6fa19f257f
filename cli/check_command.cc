// `dualswarm check` (offline validator) and `dualswarm lint`.
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/lang/spec.h"

namespace dualswarm::cli {
namespace {

const char kCheckHelp[] =
    "usage: dualswarm check --spec FILE --trace FILE [options]\n"
    "\n"
    "Decides whether the observations in a JSON-lines trace (docs/trace-format.md)\n"
    "are explained by some execution of the spec under the network model.\n"
    "\n"
    "options:\n"
    "  --spec FILE          the .dspec spec\n"
    "  --trace FILE         the trace, one observation per line ('-' for stdin)\n"
    "  --network MODEL      tcp (default: per-connection FIFO, any reordering across\n"
    "                       connections) or sync (requests served in the order sent)\n"
    "  --nodes N            the trace's connections went to a cluster of N nodes (1-16,\n"
    "                       default 1): what node_of(c) answers in the spec\n"
    "  --connect WHERE      with --nodes: round-robin (connection c to node c mod N; the\n"
    "                       default) or a node's number (every connection to it)\n"
    "  --origins N          an intermediary's trace: the tester played N origins (0-16,\n"
    "                       default 0): what origins() lists in the spec\n"
    "  --json               print {\"verdict\": ...} as JSON instead of text\n"
    "  --max-frontier N     most pending explanations kept at once, per partition\n"
    "                       (default 1000000); exceeding it ends with INCONCLUSIVE\n"
    "                       (exit 2), never ACCEPT\n"
    "  --max-steps N        most spec steps to execute, per partition (default unlimited)\n"
    "  --max-seconds S      most wall time the checker may spend (default 120); past it\n"
    "                       the verdict is INCONCLUSIVE (exit 2), never ACCEPT\n"
    "\n"
    "exit: 0 ACCEPT, 1 REJECT, 2 bad input / spec error / INCONCLUSIVE\n";

const char kLintHelp[] =
    "usage: dualswarm lint --spec FILE\n"
    "\n"
    "Loads a spec (lexer, parser, type checker, the same loader every other command\n"
    "uses) and reports every error with file:line:column, or one OK line with the\n"
    "spec's name, counts and content hash.\n"
    "\n"
    "options:\n"
    "  --spec FILE          the .dspec spec\n"
    "\n"
    "exit: 0 the spec loads, 2 it does not (or bad input)\n";

}  // namespace

int CheckCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kCheckHelp, stdout);
    return kExitOk;
  }
  FlagMap f;
  std::string err;
  if (!ParseFlags(
          args, {"spec", "trace", "network", "max-frontier", "max-steps", "max-seconds", "nodes", "connect", "origins"},
          {"json"}, &f, &err))
    return BadInput(absl::StrCat(err, "\n\n", kCheckHelp));
  if (!f.count("spec") || !f.count("trace"))
    return BadInput(absl::StrCat("check needs --spec and --trace\n\n", kCheckHelp));
  check::CheckerOptions opts;
  if (f.count("network")) opts.network = f["network"];
  if (f.count("max-frontier") && (!absl::SimpleAtoi(f["max-frontier"], &opts.max_frontier) || opts.max_frontier == 0))
    return BadInput("--max-frontier must be a positive integer");
  if (f.count("max-steps") && !absl::SimpleAtoi(f["max-steps"], &opts.max_steps))
    return BadInput("--max-steps must be a non-negative integer");
  opts.max_seconds = 120;
  if (f.count("max-seconds") && (!absl::SimpleAtod(f["max-seconds"], &opts.max_seconds) || !(opts.max_seconds > 0)))
    return BadInput("--max-seconds must be a positive number of seconds");
  lang::ConnectionNodes& nodes = opts.connection_nodes;
  if (!NumFlag(f, "nodes", 1, 16, &nodes.nodes, &err)) return BadInput(err);
  if (!NumFlag(f, "origins", 0, 16, &nodes.origins, &err)) return BadInput(err);
  if (f.count("connect") && f["connect"] != "round-robin" &&
      (!absl::SimpleAtoi(f["connect"], &nodes.connect_node) || nodes.connect_node < 0 ||
       nodes.connect_node >= nodes.nodes))
    return BadInput(absl::StrCat("--connect must be round-robin or a node's number (0 to ", nodes.nodes - 1, ")"));
  bool json = f.count("json") > 0;
  if (auto model = check::MakeNetworkModel(opts.network); !model.ok())
    return BadInput(std::string(model.status().message()));

  auto spec = lang::LoadSpecFile(f["spec"]);
  if (!spec.ok()) return BadInput(absl::StrCat("spec rejected:\n", spec.status().message()));
  std::string trace_name = f["trace"];
  absl::StatusOr<std::string> text;
  if (trace_name == "-") {
    std::string all;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) all.append(buf, n);
    text = all;
    trace_name = "<stdin>";
  } else {
    text = lang::ReadFileToString(trace_name);
  }
  if (!text.ok()) return BadInput(std::string(text.status().message()));
  auto trace = check::ParseTrace(trace_name, *text);
  if (!trace.ok()) return BadInput(std::string(trace.status().message()));

  auto start = std::chrono::steady_clock::now();
  check::CheckerStats stats;
  auto verdict = check::CheckTrace(*spec, *trace, opts, &stats);
  if (!verdict.ok()) {
    // Malformed observation sequences carry "line N: ..."; point at the file.
    return BadInput(absl::StrCat(trace_name, ": ", verdict.status().message()));
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (json) {
    std::printf("%s\n", check::VerdictToJson(*verdict, &stats).c_str());
  } else {
    std::fputs(check::FormatVerdict(*verdict).c_str(), stdout);
    std::fflush(stdout);
    std::fprintf(stderr, "checked %llu observations in %.3f s (%llu spec steps, %llu backtracks, %llu solver calls)\n",
                 static_cast<unsigned long long>(stats.observations), secs,
                 static_cast<unsigned long long>(stats.handler_runs), static_cast<unsigned long long>(stats.backtracks),
                 static_cast<unsigned long long>(stats.solver.z3_calls));
  }
  switch (verdict->kind) {
    case check::Verdict::Kind::kAccept:
      return kExitOk;
    case check::Verdict::Kind::kReject:
      return kExitRejected;
    default:
      return kExitBadInput;
  }
}

int SpecCheckCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kLintHelp, stdout);
    return kExitOk;
  }
  FlagMap f;
  std::string err;
  if (!ParseFlags(args, {"spec"}, {}, &f, &err) || !f.count("spec"))
    return BadInput(err.empty() ? "usage: dualswarm lint --spec FILE" : err);
  auto spec = lang::LoadSpecFile(f["spec"]);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
    return kExitBadInput;
  }
  std::printf("%s: spec '%s' OK (%zu vars, %zu functions, %zu generators, hash %s)\n", f["spec"].c_str(),
              (*spec)->name.c_str(), (*spec)->ast.vars.size(), (*spec)->ast.fns.size(), (*spec)->ast.gens.size(),
              (*spec)->content_hash.c_str());
  return kExitOk;
}

}  // namespace dualswarm::cli
