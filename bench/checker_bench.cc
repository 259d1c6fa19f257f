// Checker throughput benchmark.
//
// Generates key-value traces with harness::Simulate (the spec runs as the
// server behind a random network, so every trace is explained by the spec),
// then times check::CheckTrace on them. Trace generation is not timed.
//
// Rows: connections {1, 4, 16} x observations {1k, 10k, 100k} x
//   concrete  specs/kv.dspec            get/put/append/cas, all values concrete
//   symbolic  bench/kv_versioned.dspec  every write stores a server-chosen
//             `fresh string` version that its response does not reveal; gets
//             reveal it (binding), cas_version compares it with a constant
//             (symbolic branch -> solver)
//
// Each row: one guard run (the same Create + Observe loop as CheckTrace, with
// a wall-clock deadline: checks the verdict is ACCEPT, collects the stats and
// stops the row if it exceeds --deadline seconds), then --runs timed runs of
// check::CheckTrace; the reported times are their medians (wall clock and
// process CPU time; the CPU figure is steadier when other processes compete
// for the cores). A guard run longer than --single-run-above seconds is the
// row's only measurement. A row is not run when the previous size of the
// same kind and connection count, scaled linearly to this size, would
// already exceed the deadline (checking cost grows at least linearly).
// Prints a Markdown table on stdout, progress on stderr. Exits 1 when any
// trace is not accepted (a soundness bug: these traces come from the spec).
//
// Flags: --runs=N (3)  --deadline=SECONDS (60)  --single-run-above=SECONDS (10)
//        --conns=1,4,16  --sizes=1000,10000,100000  --kinds=concrete,symbolic
//        --seed=N (1)  --keys=K (override the per-row key count)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/check/checker.h"
#include "engine/harness/simulator.h"
#include "engine/harness/workloads.h"
#include "engine/lang/spec.h"

namespace dualswarm::bench {
namespace {

using check::Observation;
using ir::Value;
using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  return s.empty() ? 0 : s[s.size() / 2];
}

Value Rec(std::vector<std::pair<std::string, Value>> e) { return Value::Map(std::move(e)); }

std::vector<std::string> Keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("k", i));
  return keys;
}

const std::string& Pick(harness::Rng& rng, const std::vector<std::string>& from) { return from[rng() % from.size()]; }

// specs/kv.dspec requests over `num_keys` keys.
harness::RequestFn KvRequests(int num_keys) { return harness::KvRequests(Keys(num_keys)); }

// The versions the simulated server picks for `fresh string`, and the ones
// clients guess in cas_version (one of them never exists, so some CASes
// must fail whatever the state).
const std::vector<std::string> kVersions = {"v1", "v2", "v3"};
const std::vector<std::string> kGuesses = {"v1", "v2", "v3", "v9"};

// bench/kv_versioned.dspec requests: 1/3 get, 1/3 put, 1/3 cas_version.
harness::RequestFn VersionedRequests(int num_keys) {
  return [keys = Keys(num_keys)](harness::Rng& rng) -> Value {
    static const std::vector<std::string> vals = {"x", "y", "z"};
    const std::string& key = Pick(rng, keys);
    switch (rng() % 3) {
      case 0:
        return Rec({{"op", Value::String("get")}, {"key", Value::String(key)}});
      case 1:
        return Rec(
            {{"op", Value::String("put")}, {"key", Value::String(key)}, {"value", Value::String(Pick(rng, vals))}});
      default:
        return Rec({{"op", Value::String("cas_version")},
                    {"key", Value::String(key)},
                    {"version", Value::String(Pick(rng, kGuesses))},
                    {"value", Value::String(Pick(rng, vals))}});
    }
  };
}

// Keys per row: few keys for few connections (contention on each key),
// ~10 keys for 16 connections (a realistic spread; with 3 keys every key
// would see ~5 concurrent clients).
int DefaultKeys(int conns) { return conns >= 16 ? 10 : 3; }

struct Row {
  std::string kind;
  int conns = 0;
  int keys = 0;
  size_t observations = 0;
  bool completed = false;    // false: the guard run hit the deadline
  std::string skipped;       // why the row was not run (empty: it was)
  size_t guard_checked = 0;  // observations the guard run got through
  double guard_seconds = 0, guard_cpu = 0;
  std::vector<double> seconds, cpu;  // timed runs
  check::Verdict verdict;
  check::CheckerStats stats;
  bool trace_error = false;
  std::string error;

  double Wall() const { return Median(seconds); }
  double Cpu() const { return Median(cpu); }
  double Rate() const {
    return completed ? static_cast<double>(observations) / Wall() : static_cast<double>(guard_checked) / guard_seconds;
  }
  double CpuRate() const {
    return completed ? static_cast<double>(observations) / Cpu() : static_cast<double>(guard_checked) / guard_cpu;
  }
};

std::vector<int> IntList(const std::string& s) {
  std::vector<int> out;
  for (absl::string_view p : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    int v;
    if (!absl::SimpleAtoi(p, &v) || v <= 0) {
      std::fprintf(stderr, "bad number '%s'\n", std::string(p).c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

std::string Human(double rate) {
  if (rate >= 1e6) return absl::StrFormat("%.2fM", rate / 1e6);
  if (rate >= 1e3) return absl::StrFormat("%.1fk", rate / 1e3);
  return absl::StrFormat("%.0f", rate);
}

std::string SizeName(size_t n) {
  if (n % 1000 == 0) return absl::StrCat(n / 1000, "k");
  return absl::StrCat(n);
}

int Main(int argc, char** argv) {
  int runs = 3;
  double deadline = 60;
  double single_run_above = 10;
  uint64_t seed = 1;
  int keys_override = 0;
  std::vector<int> conns = {1, 4, 16};
  std::vector<int> sizes = {1000, 10000, 100000};
  std::vector<std::string> kinds = {"concrete", "symbolic"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      std::string p = absl::StrCat("--", name, "=");
      return a.rfind(p, 0) == 0 ? argv[i] + p.size() : nullptr;
    };
    if (const char* v = val("runs")) {
      runs = std::max(1, std::atoi(v));
    } else if (const char* v = val("deadline")) {
      deadline = std::atof(v);
    } else if (const char* v = val("single-run-above")) {
      single_run_above = std::atof(v);
    } else if (const char* v = val("seed")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = val("keys")) {
      keys_override = std::atoi(v);
    } else if (const char* v = val("conns")) {
      conns = IntList(v);
    } else if (const char* v = val("sizes")) {
      sizes = IntList(v);
    } else if (const char* v = val("kinds")) {
      kinds = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else {
      std::fprintf(stderr,
                   "usage: checker_bench [--runs=N] [--deadline=S] [--single-run-above=S] [--conns=1,4,16] "
                   "[--sizes=1000,10000,100000] [--kinds=concrete,symbolic] [--seed=N] [--keys=K]\n");
      return 2;
    }
  }

  std::map<std::string, std::shared_ptr<const lang::Spec>> specs;
  const std::map<std::string, std::string> spec_file = {{"concrete", DUALSWARM_SOURCE_DIR "/specs/kv.dspec"},
                                                        {"symbolic", DUALSWARM_SOURCE_DIR "/bench/kv_versioned.dspec"}};
  for (const auto& k : kinds) {
    auto it = spec_file.find(k);
    if (it == spec_file.end()) {
      std::fprintf(stderr, "unknown kind '%s' (concrete, symbolic)\n", k.c_str());
      return 2;
    }
    auto spec = lang::LoadSpecFile(it->second);
    if (!spec.ok()) {
      std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
      return 2;
    }
    specs[k] = *spec;
  }

  const check::CheckerOptions options;  // defaults: tcp network, frontier bound 1e6
  std::vector<Row> rows;
  bool all_accepted = true;
  for (const auto& kind : kinds) {
    for (int c : conns) {
      std::optional<size_t> prev_index;  // the previous size of this kind and connection count
      for (int n : sizes) {
        Row row;
        row.kind = kind;
        row.conns = c;
        row.keys = keys_override > 0 ? keys_override : DefaultKeys(c);
        row.observations = static_cast<size_t>(n / 2 * 2);
        std::fprintf(stderr, "%-8s conns=%-2d keys=%-2d obs=%-6zu ", kind.c_str(), c, row.keys, row.observations);
        std::fflush(stderr);
        if (prev_index) {
          const Row* prev = &rows[*prev_index];
          double prev_secs = prev->completed ? prev->Wall() : prev->guard_seconds;
          double prev_obs = static_cast<double>(prev->completed ? prev->observations : prev->guard_checked);
          double projected = prev_secs * static_cast<double>(row.observations) / std::max(prev_obs, 1.0);
          if (!prev->skipped.empty() || !prev->completed || projected > deadline) {
            bool failed = prev->trace_error || prev->verdict.kind != check::Verdict::Kind::kAccept;
            row.skipped = !prev->skipped.empty() ? "not run (the smaller row was not run)"
                          : failed
                              ? "not run (the smaller row was not accepted)"
                              : absl::StrFormat(
                                    "not run: the %s row %s, so this one would take >= %.0f s "
                                    "(linear scaling; the deadline is %.0f s)",
                                    SizeName(prev->observations),
                                    prev->completed
                                        ? absl::StrFormat("took %.1f s", prev_secs)
                                        : absl::StrFormat("reached obs %zu in %.0f s", prev->guard_checked, prev_secs),
                                    projected, deadline);
            std::fprintf(stderr, "SKIPPED: %s\n", row.skipped.c_str());
            rows.push_back(std::move(row));
            prev_index = rows.size() - 1;
            continue;
          }
        }

        harness::SimOptions so;
        so.connections = c;
        so.requests = n / 2;  // a request and its response are two observations
        so.max_in_flight = 1;
        so.seed = seed;
        so.truncate_probability = 0;
        if (kind == "symbolic") so.fresh_strings = kVersions;
        auto gen = kind == "concrete" ? KvRequests(row.keys) : VersionedRequests(row.keys);
        auto trace = harness::Simulate(*specs[kind], gen, so);
        if (!trace.ok()) {
          std::fprintf(stderr, "\nsimulate %s c=%d n=%d: %s\n", kind.c_str(), c, n,
                       std::string(trace.status().message()).c_str());
          return 2;
        }
        row.observations = trace->size();

        // Guard run: same loop as CheckTrace, with a wall-clock deadline.
        {
          auto checker = check::Checker::Create(specs[kind], options);
          if (!checker.ok()) {
            std::fprintf(stderr, "%s\n", std::string(checker.status().message()).c_str());
            return 2;
          }
          auto start = Clock::now();
          double cpu0 = CpuSeconds();
          auto until = start + std::chrono::duration<double>(deadline);
          row.completed = true;
          for (const Observation& o : *trace) {
            absl::Status s = (*checker)->Observe(o);
            if (!s.ok()) {
              row.trace_error = true;
              row.error = std::string(s.message());
              break;
            }
            ++row.guard_checked;
            if ((*checker)->verdict().kind != check::Verdict::Kind::kAccept) break;
            if ((row.guard_checked & 63) == 0 && Clock::now() > until) {
              row.completed = false;
              break;
            }
          }
          row.guard_seconds = std::chrono::duration<double>(Clock::now() - start).count();
          row.guard_cpu = CpuSeconds() - cpu0;
          row.verdict = (*checker)->verdict();
          row.stats = (*checker)->stats();
        }
        if (row.trace_error || row.verdict.kind != check::Verdict::Kind::kAccept) {
          all_accepted = false;
          std::fprintf(stderr, "\nERROR: %s trace (conns=%d, obs=%zu, seed=%llu) not accepted: %s\n", kind.c_str(), c,
                       row.observations, static_cast<unsigned long long>(seed),
                       row.trace_error ? row.error.c_str() : check::FormatVerdict(row.verdict).c_str());
          row.completed = false;
          rows.push_back(std::move(row));
          prev_index = rows.size() - 1;
          continue;
        }
        if (!row.completed) {
          std::fprintf(stderr, "SLOW: stopped after %.1f s at observation %zu of %zu\n", row.guard_seconds,
                       row.guard_checked, row.observations);
          rows.push_back(std::move(row));
          prev_index = rows.size() - 1;
          continue;
        }

        if (row.guard_seconds > single_run_above) {
          row.seconds.push_back(row.guard_seconds);
          row.cpu.push_back(row.guard_cpu);
        } else {
          for (int r = 0; r < runs; ++r) {
            check::CheckerStats st;
            auto start = Clock::now();
            double cpu0 = CpuSeconds();
            auto v = check::CheckTrace(specs[kind], *trace, options, &st);
            double cpu = CpuSeconds() - cpu0;
            double secs = std::chrono::duration<double>(Clock::now() - start).count();
            if (!v.ok() || v->kind != check::Verdict::Kind::kAccept) {
              all_accepted = false;
              if (v.ok()) {
                row.verdict = *v;
              } else {
                row.trace_error = true;
                row.error = std::string(v.status().message());
              }
              std::fprintf(stderr, "\nERROR: timed run %d not accepted: %s\n", r,
                           v.ok() ? check::FormatVerdict(*v).c_str() : row.error.c_str());
              row.completed = false;
              break;
            }
            row.seconds.push_back(secs);
            row.cpu.push_back(cpu);
          }
        }
        if (row.completed)
          std::fprintf(stderr, "%8.3f s (cpu %.3f s, %zu run%s)  %10.0f obs/s\n", row.Wall(), row.Cpu(),
                       row.seconds.size(), row.seconds.size() == 1 ? "" : "s", row.Rate());
        rows.push_back(std::move(row));
        prev_index = rows.size() - 1;
      }
    }
  }

  std::printf(
      "| values | conns | keys | observations | time (s) | obs/s | CPU time (s) | obs/s (CPU) | "
      "handler runs | backtracks | max frontier | solver checks | Z3 calls | Z3 time (s) | "
      "verdict |\n");
  std::printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (const Row& r : rows) {
    if (!r.skipped.empty()) {
      std::printf("| %s | %d | %d | %s | – | – | – | – | – | – | – | – | – | – | %s |\n", r.kind.c_str(), r.conns,
                  r.keys, SizeName(r.observations).c_str(), r.skipped.c_str());
      continue;
    }
    std::string verdict = r.trace_error ? absl::StrCat("ERROR: ", r.error) : check::VerdictKindName(r.verdict.kind);
    std::string time = absl::StrFormat("%.3f", r.Wall());
    std::string cpu = absl::StrFormat("%.3f", r.Cpu());
    std::string rate = Human(r.Rate());
    std::string cpu_rate = Human(r.CpuRate());
    if (r.completed && r.seconds.size() == 1) {
      time += " (1 run)";
      cpu += " (1 run)";
    }
    if (!r.trace_error && r.verdict.kind == check::Verdict::Kind::kAccept && !r.completed) {
      verdict = absl::StrFormat("SLOW: stopped after %.0f s at obs %zu of %zu (accepted so far)", r.guard_seconds,
                                r.guard_checked, r.observations);
      time = absl::StrFormat("> %.0f", r.guard_seconds);
      cpu = absl::StrFormat("> %.0f", r.guard_cpu);
      rate = absl::StrCat(Human(r.Rate()), " (partial)");
      cpu_rate = absl::StrCat(Human(r.CpuRate()), " (partial)");
    }
    std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %llu | %llu | %zu | %llu | %llu | %.2f | %s |\n",
                r.kind.c_str(), r.conns, r.keys, SizeName(r.observations).c_str(), time.c_str(), rate.c_str(),
                cpu.c_str(), cpu_rate.c_str(), static_cast<unsigned long long>(r.stats.handler_runs),
                static_cast<unsigned long long>(r.stats.backtracks), r.stats.max_frontier_seen,
                static_cast<unsigned long long>(r.stats.solver.checks),
                static_cast<unsigned long long>(r.stats.solver.z3_calls), r.stats.solver.z3_seconds, verdict.c_str());
  }

  // The target: >= 200k observations/s for concrete kv traces, 4 connections.
  bool any = false, met = true;
  std::string per_size;
  for (const Row& r : rows) {
    if (r.kind != "concrete" || r.conns != 4) continue;
    bool ok = r.completed && r.Rate() >= 200000;
    absl::StrAppend(
        &per_size, any ? "; " : "", SizeName(r.observations), ": ",
        r.completed ? absl::StrCat(Human(r.Rate()), " obs/s (CPU time: ", Human(r.CpuRate()), ")") : "not measured",
        ok ? " met" : " NOT met");
    any = true;
    met = met && ok;
  }
  if (any)
    std::printf(
        "\nTARGET >= 200k obs/s for concrete kv traces with 4 connections (wall clock, "
        "every size): %s. %s.\n",
        met ? "MET" : "NOT MET", per_size.c_str());
  return all_accepted ? 0 : 1;
}

}  // namespace
}  // namespace dualswarm::bench

int main(int argc, char** argv) { return dualswarm::bench::Main(argc, argv); }
