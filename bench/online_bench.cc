// Online tester benchmark: time to reject each mutant of the reference
// servers (median and max over N seeds, one tester) and the tester's
// throughput against the correct servers. Prints Markdown.
//
// usage: online_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "workers/runner/runner.h"

using namespace dualswarm;

namespace {

workers::JobOptions Options(const std::string& launch, const std::string& adapter, uint64_t seed, uint64_t steps) {
  workers::JobOptions o;
  o.launch = launch;
  o.adapter = adapter;
  o.exec.seed = seed;
  o.exec.steps = steps;
  o.exec.connections = 4;
  o.exec.max_in_flight = 4;
  o.response_timeout_ms = 250;  // loopback servers answer in well under 1 ms
  return o;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds from launch to finding, per seed; -1 when a seed found nothing.
std::vector<double> TimesToFinding(std::shared_ptr<const lang::Spec> spec, const std::string& bin,
                                   const std::string& adapter, int mutant, int seeds, bool* exists,
                                   std::string* kinds) {
  std::vector<double> out;
  *exists = true;
  for (int seed = 1; seed <= seeds; ++seed) {
    auto o = Options(absl::StrCat(bin, " --port {port} --dir {dir} --mutant ", mutant), adapter,
                     static_cast<uint64_t>(seed), 100000);
    o.time_budget_s = 30;
    auto t0 = std::chrono::steady_clock::now();
    auto r = workers::RunJob(spec, o);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      *exists = false;
      return out;
    }
    bool found = r->outcome != workers::Outcome::kPassed;
    out.push_back(found ? secs : -1);
    if (found && kinds->find(workers::OutcomeName(r->outcome)) == std::string::npos)
      absl::StrAppend(kinds, kinds->empty() ? "" : "+", workers::OutcomeName(r->outcome));
  }
  return out;
}

void MutantTable(const std::string& title, std::shared_ptr<const lang::Spec> spec, const std::string& bin,
                 const std::string& adapter, int seeds, bool* all_under_target) {
  std::printf("\n### %s mutants (%d seeds each, 4 connections, time from SUT launch to finding)\n\n", title.c_str(),
              seeds);
  std::printf("| mutant | finding | median s | max s | seeds without finding |\n|---:|---|---:|---:|---:|\n");
  for (int m = 1; m < 200; ++m) {
    bool exists;
    std::string kinds;
    auto t = TimesToFinding(spec, bin, adapter, m, seeds, &exists, &kinds);
    if (!exists) break;
    std::vector<double> found;
    int missed = 0;
    for (double x : t) (x < 0 ? missed++ : (found.push_back(x), 0));
    double med = Median(found), mx = found.empty() ? 0 : *std::max_element(found.begin(), found.end());
    if (med >= 0.5 || missed > 0) *all_under_target = false;
    std::printf("| %d | %s | %.3f | %.3f | %d |\n", m, kinds.c_str(), med, mx, missed);
    std::fflush(stdout);
  }
}

void Throughput(const std::string& title, std::shared_ptr<const lang::Spec> spec, const std::string& bin,
                const std::string& adapter) {
  std::vector<double> rates;
  for (int seed = 1; seed <= 5; ++seed) {
    auto r = workers::RunJob(
        spec, Options(absl::StrCat(bin, " --port {port} --dir {dir}"), adapter, static_cast<uint64_t>(seed), 5000));
    if (!r.ok() || r->outcome != workers::Outcome::kPassed) {
      std::printf("| %s | FAILED: %s |\n", title.c_str(), r.ok() ? r->reason.c_str() : r.status().ToString().c_str());
      return;
    }
    rates.push_back(static_cast<double>(r->sent) / r->seconds);
  }
  std::printf("| %s | %.0f |\n", title.c_str(), Median(rates));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: online_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]\n");
    return 2;
  }
  std::string src = argv[1], webdav = argv[2], kv = argv[3];
  int seeds = argc > 4 ? std::atoi(argv[4]) : 20;
  auto http = lang::LoadSpecFile(src + "/specs/http_webdav.dspec");
  auto kvs = lang::LoadSpecFile(src + "/specs/kv.dspec");
  if (!http.ok() || !kvs.ok()) {
    std::fprintf(stderr, "cannot load specs\n");
    return 2;
  }
  std::printf(
      "\n### Tester throughput against the correct servers (5000 requests, 4 connections, median of 5 seeds)\n\n");
  std::printf("| server | requests/s (sent, answered and checked) |\n|---|---:|\n");
  Throughput("ds-ref-webdav (http_webdav.dspec)", *http, webdav, "http");
  Throughput("ds-ref-kv (kv.dspec)", *kvs, kv, "jsonl");
  bool ok = true;
  MutantTable("ds-ref-webdav", *http, webdav, "http", seeds, &ok);
  MutantTable("ds-ref-kv", *kvs, kv, "jsonl", seeds, &ok);
  std::printf("\nTarget (median under 0.5 s for every mutant, every seed finds it): %s\n", ok ? "MET" : "NOT MET");
  return 0;
}
