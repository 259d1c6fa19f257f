// Shrinking benchmark for races and slow starts (issue 18): for each case
// (a reference server's mutant, its spec and adapter) over N seeds, the
// time from the start of the job to a shrunk counterexample, the requests
// before and after shrinking, and how often the shrunk input reproduces
// the finding's signature over R replays on fresh servers. Prints
// Markdown: one row per seed, then per case how many seeds met the
// issue's bar (at most 10 requests, a rate of at least 50 %, at most 60 s).
//
//   race_shrink_bench SOURCE_DIR SUTS_DIR [--seeds N] [--replays R]
//                     [--launch-delay-ms D] [--shrink-jobs J]
//                     [--shrink-seconds S] [--cases webdav:18,kv:2,...]
//
// --launch-delay-ms starts every server through `sleep` first (a server
// that takes that long to start, as a Python one does); --shrink-jobs
// reruns that many candidates at once where the build has parallel
// shrinking (a build from before it ignores the flag and says so).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

using namespace dualswarm;

namespace {

struct Case {
  std::string server;  // webdav, kv or queue
  int mutant = 0;
};

struct Server {
  std::string spec;     // under specs/
  std::string binary;   // under SUTS_DIR
  std::string adapter;  // the wire protocol
};

const std::map<std::string, Server>& Servers() {
  static const auto* kServers = new std::map<std::string, Server>{
      {"webdav", {"http_webdav.dspec", "ds-ref-webdav", "http"}},
      {"kv", {"kv.dspec", "ds-ref-kv", "jsonl"}},
      {"queue", {"queue.dspec", "ds-ref-queue", "jsonl"}},
  };
  return *kServers;
}

struct Flags {
  int seeds = 10;
  int replays = 20;
  int launch_delay_ms = 0;
  int shrink_jobs = 1;
  double shrink_seconds = 60;
  // The reference servers' mutants whose bug needs two connections
  // (tests/suts/MUTANTS.md): webdav 18 (preconditions against a stale
  // snapshot), kv 2 (append to a connection's stale copy), kv 3 (a
  // check-then-act cas), queue 2 (a deq that removes its item late).
  std::vector<Case> cases = {{"webdav", 18}, {"kv", 2}, {"kv", 3}, {"queue", 2}};
};

// Sets ShrinkJobOptions::jobs where the build has it (a generic lambda, so
// that a build from before parallel shrinking compiles without it).
constexpr auto kSetJobs = [](auto& so, int jobs) {
  if constexpr (requires { so.jobs = jobs; }) so.jobs = jobs;
};
template <typename Options>
constexpr bool kHasJobs = requires(Options so) {
  so.jobs;
};
constexpr bool kHasParallelShrinking = kHasJobs<workers::ShrinkJobOptions>;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string Launch(const Flags& f, const std::string& bin, int mutant) {
  std::string server = absl::StrCat(bin, " --port {port} --dir {dir} --mutant ", mutant);
  if (f.launch_delay_ms <= 0) return server;
  return absl::StrCat("sleep ", f.launch_delay_ms / 1000.0, "; exec ", server);
}

// How many of `times` replays of cx's input fail with cx's signature.
int Replays(std::shared_ptr<const lang::Spec> spec, const harness::Counterexample& cx, const std::string& launch,
            int times) {
  int same = 0;
  for (int i = 0; i < times; ++i) {
    workers::JobOptions o = workers::ReplayOptions(cx, cx.input);
    o.launch = launch;
    auto r = workers::RunJob(spec, o);
    same += r.ok() && r->outcome != workers::Outcome::kPassed &&
            harness::ComputeSignature(workers::VerdictOf(*r), r->trace) == cx.signature;
  }
  return same;
}

void RunCase(const Flags& f, const std::string& src, const std::string& suts, const Case& c) {
  const Server& s = Servers().at(c.server);
  auto spec = lang::LoadSpecFile(src + "/specs/" + s.spec);
  if (!spec.ok()) {
    std::printf("\n%s: %s\n", s.spec.c_str(), std::string(spec.status().message()).c_str());
    return;
  }
  const std::string launch = Launch(f, suts + "/" + s.binary, c.mutant);
  std::printf("\n### %s mutant %d (%s)\n\n", c.server.c_str(), c.mutant, s.spec.c_str());
  std::printf("| seed | requests before | after | shrink s | to counterexample s | reruns | complete | replays |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int met = 0, found = 0;
  for (int seed = 1; seed <= f.seeds; ++seed) {
    // The first failing job from seed*1000 on (as shrink_bench picks them).
    for (uint64_t job = static_cast<uint64_t>(seed) * 1000; job < static_cast<uint64_t>(seed) * 1000 + 20; ++job) {
      workers::JobOptions o;
      o.launch = launch;
      o.adapter = s.adapter;
      o.exec.seed = job;
      o.exec.steps = 1000;
      o.exec.connections = 4;
      o.exec.max_in_flight = 4;
      o.response_timeout_ms = 1000;
      const auto t0 = std::chrono::steady_clock::now();
      auto r = workers::RunJob(*spec, o);
      if (!r.ok()) {
        std::printf("| %d | error: %s |\n", seed, std::string(r.status().message()).c_str());
        break;
      }
      if (r->outcome == workers::Outcome::kPassed) continue;
      workers::ShrinkJobOptions so;  // the defaults (as a worker shrinks), with the flags' budget and jobs
      so.max_seconds = f.shrink_seconds;
      so.verify = 0;
      kSetJobs(so, f.shrink_jobs);
      const auto s0 = std::chrono::steady_clock::now();
      auto cx = workers::MakeCounterexample(*spec, o, *r, so);
      const double shrink_s = Seconds(s0), total_s = Seconds(t0);
      if (!cx.ok()) {
        std::printf("| %d | error: %s |\n", seed, std::string(cx.status().message()).c_str());
        break;
      }
      ++found;
      const int same = f.replays > 0 ? Replays(*spec, *cx, launch, f.replays) : 0;
      const bool meets = cx->input.size() <= 10 && (f.replays == 0 || 2 * same >= f.replays) && total_s <= 60;
      met += meets;
      std::printf("| %d | %zu | %zu | %.1f | %.1f | %d | %s | %d/%d |\n", seed, cx->original_size, cx->input.size(),
                  shrink_s, total_s, cx->shrink_reruns, cx->shrink_complete ? "yes" : "no", same, f.replays);
      std::fflush(stdout);
      break;
    }
  }
  std::printf("\n%d of %d seeds found it; %d met the bar (<= 10 requests, %s<= 60 s to the counterexample)\n", found,
              f.seeds, met, f.replays > 0 ? ">= 50 % of replays, " : "");
  std::fflush(stdout);
}

bool ParseCases(const std::string& text, std::vector<Case>* out) {
  out->clear();
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    Case c;
    if (parts.size() != 2 || !Servers().count(parts[0]) || !absl::SimpleAtoi(parts[1], &c.mutant)) return false;
    c.server = parts[0];
    out->push_back(c);
  }
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: race_shrink_bench SOURCE_DIR SUTS_DIR [--seeds N] [--replays R] [--launch-delay-ms D]\n"
      "                         [--shrink-jobs J] [--shrink-seconds S] [--cases webdav:18,kv:2,...]\n";
  if (argc < 3) {
    std::fputs(usage, stderr);
    return 2;
  }
  Flags f;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    bool ok = true;
    if (flag == "--seeds")
      ok = absl::SimpleAtoi(value, &f.seeds) && f.seeds > 0;
    else if (flag == "--replays")
      ok = absl::SimpleAtoi(value, &f.replays) && f.replays >= 0;
    else if (flag == "--launch-delay-ms")
      ok = absl::SimpleAtoi(value, &f.launch_delay_ms) && f.launch_delay_ms >= 0;
    else if (flag == "--shrink-jobs")
      ok = absl::SimpleAtoi(value, &f.shrink_jobs) && f.shrink_jobs > 0;
    else if (flag == "--shrink-seconds")
      ok = absl::SimpleAtod(value, &f.shrink_seconds) && f.shrink_seconds > 0;
    else if (flag == "--cases")
      ok = ParseCases(value, &f.cases);
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "bad flag %s %s\n%s", flag.c_str(), value.c_str(), usage);
      return 2;
    }
  }
  std::printf("Settings: %d seeds, %d replays, launch delay %d ms, shrink jobs %d%s, shrink budget %.0f s\n", f.seeds,
              f.replays, f.launch_delay_ms, f.shrink_jobs,
              kHasParallelShrinking ? "" : " (this build shrinks one candidate at a time)", f.shrink_seconds);
  for (const Case& c : f.cases) RunCase(f, argv[1], argv[2], c);
  return 0;
}
