// Online tester benchmark: time to reject each mutant of the reference
// servers (median and max over N seeds, one tester) and the tester's
// throughput against the correct servers. Prints Markdown.
//
// usage: online_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]
//        online_bench --intermediaries SOURCE_DIR RELAY_BIN PROXY_BIN [SEEDS]
// The second form measures the intermediaries (the tester plays their
// origin too: --origins 1) instead.
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

// A reference server: its binary, adapter, and for an intermediary the
// launch template's origin flags and origin endpoints.
struct Server {
  std::string bin;
  std::string adapter;
  std::string launch_extra;
  int origins = 0;
};

workers::JobOptions Options(const Server& server, const std::string& launch_flags, uint64_t seed, uint64_t steps) {
  workers::JobOptions o;
  o.launch = absl::StrCat(server.bin, " --port {port} --dir {dir}", server.launch_extra, launch_flags);
  o.adapter = server.adapter;
  o.origins = server.origins;
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
std::vector<double> TimesToFinding(std::shared_ptr<const lang::Spec> spec, const Server& server, int mutant, int seeds,
                                   bool* exists, std::string* kinds) {
  std::vector<double> out;
  *exists = true;
  for (int seed = 1; seed <= seeds; ++seed) {
    auto o = Options(server, absl::StrCat(" --mutant ", mutant), static_cast<uint64_t>(seed), 100000);
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

void MutantTable(const std::string& title, std::shared_ptr<const lang::Spec> spec, const Server& server, int seeds,
                 double target_s, bool* all_under_target) {
  std::printf("\n### %s mutants (%d seeds each, 4 connections, time from SUT launch to finding)\n\n", title.c_str(),
              seeds);
  std::printf("| mutant | finding | median s | max s | seeds without finding |\n|---:|---|---:|---:|---:|\n");
  for (int m = 1; m < 200; ++m) {
    bool exists;
    std::string kinds;
    auto t = TimesToFinding(spec, server, m, seeds, &exists, &kinds);
    if (!exists) break;
    std::vector<double> found;
    int missed = 0;
    for (double x : t) (x < 0 ? missed++ : (found.push_back(x), 0));
    double med = Median(found), mx = found.empty() ? 0 : *std::max_element(found.begin(), found.end());
    if (med >= target_s || missed > 0) *all_under_target = false;
    std::printf("| %d | %s | %.3f | %.3f | %d |\n", m, kinds.c_str(), med, mx, missed);
    std::fflush(stdout);
  }
}

void Throughput(const std::string& title, std::shared_ptr<const lang::Spec> spec, const Server& server) {
  std::vector<double> rates;
  for (int seed = 1; seed <= 5; ++seed) {
    auto r = workers::RunJob(spec, Options(server, "", static_cast<uint64_t>(seed), 5000));
    if (!r.ok() || r->outcome != workers::Outcome::kPassed) {
      std::printf("| %s | FAILED: %s |\n", title.c_str(), r.ok() ? r->reason.c_str() : r.status().ToString().c_str());
      return;
    }
    rates.push_back(static_cast<double>(r->sent) / r->seconds);
  }
  std::printf("| %s | %.0f |\n", title.c_str(), Median(rates));
}

void PrintThroughputHeader() {
  std::printf(
      "\n### Tester throughput against the correct servers (5000 requests, 4 connections, median of 5 seeds)\n\n");
  std::printf("| server | requests/s (sent, answered and checked) |\n|---|---:|\n");
}

// The relay, the HTTP forward proxy and the HTTP cache, the tester
// playing their origin.
int Intermediaries(const std::string& src, const std::string& relay_bin, const std::string& proxy_bin,
                   const std::string& cache_bin, int seeds) {
  auto relay = lang::LoadSpecFile(src + "/specs/examples/relay.dspec");
  auto proxy = lang::LoadSpecFile(src + "/specs/http_proxy.dspec");
  auto cache = lang::LoadSpecFile(src + "/specs/http_cache.dspec");
  if (!relay.ok() || !proxy.ok() || !cache.ok()) {
    std::fprintf(stderr, "cannot load specs\n");
    return 2;
  }
  const std::string origin = " --origin-port {origin_port} --origin-connections 2";
  const Server relay_server{relay_bin, "jsonl", origin, 1};
  const Server proxy_server{proxy_bin, "http", origin, 1};
  const Server cache_server{cache_bin, "http", origin, 1};
  PrintThroughputHeader();
  Throughput("ds-ref-relay (examples/relay.dspec)", *relay, relay_server);
  Throughput("ds-ref-proxy (http_proxy.dspec)", *proxy, proxy_server);
  Throughput("ds-ref-cache (http_cache.dspec)", *cache, cache_server);
  bool ok = true;
  MutantTable("ds-ref-relay", *relay, relay_server, seeds, 1.0, &ok);
  MutantTable("ds-ref-proxy", *proxy, proxy_server, seeds, 1.0, &ok);
  MutantTable("ds-ref-cache", *cache, cache_server, seeds, 1.0, &ok);
  std::printf("\nTarget (median under 1 s for every mutant, every seed finds it): %s\n", ok ? "MET" : "NOT MET");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::string(argv[1]) == "--intermediaries")
    return Intermediaries(argv[2], argv[3], argv[4], argv[5], argc > 6 ? std::atoi(argv[6]) : 20);
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: online_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]\n"
                 "       online_bench --intermediaries SOURCE_DIR RELAY_BIN PROXY_BIN CACHE_BIN [SEEDS]\n");
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
  const Server webdav_server{webdav, "http", "", 0};
  const Server kv_server{kv, "jsonl", "", 0};
  PrintThroughputHeader();
  Throughput("ds-ref-webdav (http_webdav.dspec)", *http, webdav_server);
  Throughput("ds-ref-kv (kv.dspec)", *kvs, kv_server);
  bool ok = true;
  MutantTable("ds-ref-webdav", *http, webdav_server, seeds, 0.5, &ok);
  MutantTable("ds-ref-kv", *kvs, kv_server, seeds, 0.5, &ok);
  std::printf("\nTarget (median under 0.5 s for every mutant, every seed finds it): %s\n", ok ? "MET" : "NOT MET");
  return 0;
}
