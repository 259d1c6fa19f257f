// libFuzzer target for the JSON parser (engine/ir/json.h): any input must
// parse or fail cleanly, and a parsed value must survive print -> parse
// unchanged (and print the same text again). Aborts on a mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "engine/ir/json.h"

namespace {

void Die(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "fuzz_json: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = dualswarm::ir::ParseJson(text);
  if (!v.ok()) return 0;
  std::string printed = dualswarm::ir::ToJson(*v);
  auto again = dualswarm::ir::ParseJson(printed);
  if (!again.ok()) Die("printed JSON does not parse", printed, std::string(again.status().message()));
  if (*again != *v) Die("parse(print(v)) != v", v->ToString(), again->ToString());
  std::string reprinted = dualswarm::ir::ToJson(*again);
  if (reprinted != printed) Die("print is not stable", printed, reprinted);
  return 0;
}
