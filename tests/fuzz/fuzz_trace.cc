// libFuzzer target for the trace parser that `dualswarm check` uses
// (engine/check/observation.h ParseTrace). Any input must parse or fail
// cleanly; a parsed trace written back with ObservationToJson must parse
// to the same observations.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/check/observation.h"

namespace {

namespace check = dualswarm::check;

bool Same(const check::Observation& a, const check::Observation& b) {
  return a.kind == b.kind && a.side == b.side && a.label == b.label && a.conn == b.conn && a.msg == b.msg && a.t == b.t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = check::ParseTrace("fuzz.jsonl", text);
  if (!trace.ok()) return 0;
  std::string written;
  for (const auto& o : *trace) written += check::ObservationToJson(o) + "\n";
  auto again = check::ParseTrace("written.jsonl", written);
  if (!again.ok()) {
    std::fprintf(stderr, "fuzz_trace: written trace does not parse: %s\n%s",
                 std::string(again.status().message()).c_str(), written.c_str());
    std::abort();
  }
  if (again->size() != trace->size()) std::abort();
  for (size_t i = 0; i < trace->size(); ++i) {
    if (!Same((*trace)[i], (*again)[i])) {
      std::fprintf(stderr, "fuzz_trace: observation %zu changed by write -> parse:\n  %s\n  %s\n", i,
                   check::ObservationToJson((*trace)[i]).c_str(), check::ObservationToJson((*again)[i]).c_str());
      std::abort();
    }
  }
  return 0;
}
