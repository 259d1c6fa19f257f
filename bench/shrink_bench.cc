// Shrinking benchmark: for every mutant of the reference servers, over N
// seeds: messages in the failing trace before and after shrinking, reruns
// used and shrink wall time (medians). Prints Markdown.
//
// usage: shrink_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

using namespace dualswarm;

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

size_t Messages(const std::vector<check::Observation>& trace) {
  size_t n = 0;
  for (const auto& o : trace)
    n += o.kind == check::Observation::Kind::kSent || o.kind == check::Observation::Kind::kReceived;
  return n;
}

void Table(const std::string& title, std::shared_ptr<const lang::Spec> spec, const std::string& bin,
           const std::string& adapter, int seeds) {
  std::printf("\n### %s (%d seeds per mutant, medians)\n\n", title.c_str(), seeds);
  std::printf(
      "| mutant | messages before | messages after | reruns | shrink s | complete "
      "|\n|---:|---:|---:|---:|---:|---:|\n");
  for (int m = 1; m < 200; ++m) {
    std::vector<double> before, after, reruns, secs;
    int complete = 0, found = 0;
    bool exists = true;
    for (int seed = 1; seed <= seeds && exists; ++seed) {
      for (uint64_t s = static_cast<uint64_t>(seed) * 1000; s < static_cast<uint64_t>(seed) * 1000 + 20; ++s) {
        workers::JobOptions o;
        o.launch = absl::StrCat(bin, " --port {port} --dir {dir} --mutant ", m);
        o.adapter = adapter;
        o.exec.seed = s;
        o.exec.steps = 1000;
        o.exec.connections = 4;
        o.exec.max_in_flight = 4;
        o.response_timeout_ms = 250;
        auto r = workers::RunJob(spec, o);
        if (!r.ok()) {
          exists = false;
          break;
        }
        if (r->outcome == workers::Outcome::kPassed) continue;
        workers::ShrinkJobOptions so;  // the defaults, as `dualswarm test` uses them
        auto t0 = std::chrono::steady_clock::now();
        auto cx = workers::MakeCounterexample(spec, o, *r, so);
        double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!cx.ok()) break;
        ++found;
        before.push_back(static_cast<double>(Messages(r->trace)));
        after.push_back(static_cast<double>(Messages(cx->trace)));
        reruns.push_back(cx->shrink_reruns);
        secs.push_back(dt);
        complete += cx->shrink_complete;
        break;
      }
    }
    if (!exists) break;
    std::printf("| %d | %.0f | %.0f | %.0f | %.2f | %d/%d |\n", m, Median(before), Median(after), Median(reruns),
                Median(secs), complete, found);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: shrink_bench SOURCE_DIR WEBDAV_BIN KV_BIN [SEEDS]\n");
    return 2;
  }
  std::string src = argv[1];
  int seeds = argc > 4 ? std::atoi(argv[4]) : 10;
  auto http = lang::LoadSpecFile(src + "/specs/http_webdav.dspec");
  auto kv = lang::LoadSpecFile(src + "/specs/kv.dspec");
  if (!http.ok() || !kv.ok()) return 2;
  Table("ds-ref-webdav mutants", *http, argv[2], "http", seeds);
  Table("ds-ref-kv mutants", *kv, argv[3], "jsonl", seeds);
  return 0;
}
