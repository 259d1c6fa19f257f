// `dualswarm explore`: model checking a spec composed with its own `gen`
// block before testing anything (engine/explore/explorer.h, docs/explore.md).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/explore/explorer.h"
#include "engine/ir/json.h"
#include "engine/lang/spec.h"

namespace dualswarm::cli {
namespace {

const char kExploreHelp[] =
    "usage: dualswarm explore --spec FILE [options]\n"
    "\n"
    "Explores the spec composed with its own `gen` block, depth-first to a depth bound:\n"
    "from the initial state, every request the gen block can make (enumerated: every\n"
    "alternative, every pick, a few words and numbers), handled along every path of the\n"
    "spec. States are the spec's globals with their path constraints. Reports spec\n"
    "errors a reachable request runs into (a failed `assert`, a type error, a limit),\n"
    "deadlocks (a request the spec has no feasible path for) and violations of the\n"
    "spec's `property`s (their monitors run on each path), each with the shortest\n"
    "request sequence found, and the states visited (docs/explore.md).\n"
    "\n"
    "options:\n"
    "  --spec FILE          the .dspec spec\n"
    "  --gen NAME           the gen block (default request)\n"
    "  --depth N            requests from the initial state (default 6, at most 64)\n"
    "  --max-states N       distinct states kept (default 200000; each is kept as text)\n"
    "  --time S             wall-time bound in seconds (default 60)\n"
    "  --order O            first (as the gen block enumerates requests), last, or random\n"
    "                       (a permutation per state from --seed): jobs of a swarm differ\n"
    "                       by it\n"
    "  --seed N             for --order random (default 1)\n"
    "  --words W,W,...      what random_word() and random_etag() may give (default a,b)\n"
    "  --int-choices K      values random_int(lo, hi) may give: lo..lo+K-1 (default 2)\n"
    "  --max-requests N     distinct requests tried per state (default 64, at most 4096);\n"
    "                       a state with more is explored incompletely (said so)\n"
    "  --stop-at-first      stop at the first violation\n"
    "  --json               print the result as one JSON document\n"
    "\n"
    "exit: 0 no violation within the bounds, 1 violations, 2 bad input or spec error\n"
    "(loading), or the search was incomplete (a bound other than the depth, or requests\n"
    "cut by --max-requests) and found no violation\n";

std::atomic<bool> g_interrupted{false};
void OnSignal(int) { g_interrupted.store(true); }

std::string Sequence(const std::vector<ir::Value>& requests) {
  std::string out;
  for (size_t i = 0; i < requests.size(); ++i)
    absl::StrAppend(&out, "    ", i + 1, ". ", ir::ToJson(requests[i]), "\n");
  return out;
}

}  // namespace

int ExploreCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kExploreHelp, stdout);
    return kExitOk;
  }
  FlagMap f;
  std::string err;
  if (!ParseFlags(
          args, {"spec", "gen", "depth", "max-states", "time", "order", "seed", "words", "int-choices", "max-requests"},
          {"stop-at-first", "json"}, &f, &err))
    return BadInput(absl::StrCat(err, "\n\n", kExploreHelp));
  if (!f.count("spec")) return BadInput(absl::StrCat("explore needs --spec\n\n", kExploreHelp));
  explore::ExploreOptions o;
  if (f.count("gen")) o.gen = f["gen"];
  if (!NumFlag(f, "depth", 0, 64, &o.max_depth, &err) ||
      !NumFlag(f, "max-states", 1, 100'000'000, &o.max_states, &err) ||
      !NumFlag(f, "seed", 0, INT64_MAX, &o.seed, &err) ||
      !NumFlag(f, "int-choices", 1, 1000, &o.alphabet.int_choices, &err) ||
      !NumFlag(f, "max-requests", 1, 4096, &o.alphabet.max_requests, &err))
    return BadInput(err);
  if (f.count("time") && (!absl::SimpleAtod(f["time"], &o.max_seconds) || !(o.max_seconds > 0)))
    return BadInput("--time must be a positive number of seconds");
  if (f.count("order")) {
    auto order = explore::ParseActionOrder(f["order"]);
    if (!order.ok()) return BadInput(std::string(order.status().message()));
    o.order = *order;
  }
  if (f.count("words")) {
    o.alphabet.words = absl::StrSplit(f["words"], ',', absl::SkipEmpty());
    if (o.alphabet.words.empty() || o.alphabet.words.size() > 64)
      return BadInput("--words takes 1 to 64 comma-separated words");
  }
  o.stop_at_first = f.count("stop-at-first") > 0;
  const bool json = f.count("json") > 0;
  auto spec = lang::LoadSpecFile(f["spec"]);
  if (!spec.ok()) return BadInput(absl::StrCat("spec rejected:\n", spec.status().message()));
  o.cancel = &g_interrupted;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  auto r = explore::Explore(*spec, o);
  if (!r.ok()) return BadInput(std::string(r.status().message()));
  if (json) {
    std::printf("%s\n", explore::ExploreResultToJson(*r).c_str());
  } else {
    std::printf("explored %llu states (%llu transitions, depth %d of %d) in %.2f s, %.0f states/s%s\n",
                static_cast<unsigned long long>(r->states), static_cast<unsigned long long>(r->transitions),
                r->depth_reached, o.max_depth, r->seconds,
                r->seconds > 0 ? static_cast<double>(r->states) / r->seconds : 0.0,
                r->stopped_by.empty() ? "" : absl::StrCat("; stopped by the ", r->stopped_by).c_str());
    if (r->states_with_requests_cut > 0)
      std::printf("incomplete: %llu states had more requests than --max-requests (or gen runs than 4096)\n",
                  static_cast<unsigned long long>(r->states_with_requests_cut));
    if (r->monitors_unknown > 0)
      std::printf(
          "properties unjudged on %llu paths: a condition read a value the spec left symbolic (a `fresh` "
          "one)\n",
          static_cast<unsigned long long>(r->monitors_unknown));
    if (r->violations.empty()) std::printf("no violation within the bounds\n");
    for (const auto& v : r->violations)
      std::printf("%s: %s\n  after %zu requests:\n%s", explore::ViolationKindName(v.kind), v.message.c_str(),
                  v.requests.size(), Sequence(v.requests).c_str());
  }
  if (!r->violations.empty()) return kExitRejected;
  return r->complete() ? kExitOk : kExitBadInput;
}

}  // namespace dualswarm::cli
