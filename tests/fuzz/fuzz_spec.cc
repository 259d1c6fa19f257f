// libFuzzer target for spec loading (engine/lang/spec.h LoadSpec: lexer,
// parser, checks and evaluation of the initial state — what `dualswarm
// lint` and `check` run on a spec file). Any input must load or be refused
// with an error status, never crash; run it with -timeout and -rss_limit_mb
// so that a slow or huge load is a finding too (scripts/fuzz.sh does).
#include <cstdint>

#include "absl/strings/string_view.h"
#include "engine/lang/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view source(reinterpret_cast<const char*>(data), size);
  auto spec = dualswarm::lang::LoadSpec("fuzz.dspec", source);
  (void)spec;  // a refusal is fine; crashes, hangs and blow-ups are not
  return 0;
}
