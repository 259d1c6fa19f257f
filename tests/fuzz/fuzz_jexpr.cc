// libFuzzer target for J-expressions (engine/ir/jexpr.h). Input: the first
// line is a J-expression (JSON), every further line a message of the live
// trace (JSON, labelled 1, 2, ...). Checks: Instantiate never crashes; any
// JSON value, taken as data (QuoteLookalikes with no real holes),
// instantiates to itself — whatever "$ref" or "$quote" keys it has; every
// "$ref" that
// parses prints back to text that parses to the same reference (holes are
// stored as text and re-read on replay).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "engine/ir/jexpr.h"
#include "engine/ir/json.h"

namespace {

using dualswarm::ir::Value;
namespace ir = dualswarm::ir;

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_jexpr: %s: %s\n", what, detail.c_str());
  std::abort();
}

bool SameRef(const ir::JRef& a, const ir::JRef& b) {
  if (a.label != b.label || a.fn != b.fn || a.path.size() != b.path.size()) return false;
  for (size_t i = 0; i < a.path.size(); ++i) {
    const ir::JStep& x = a.path[i];
    const ir::JStep& y = b.path[i];
    if (x.is_index != y.is_index) return false;
    if (x.is_index ? x.index != y.index : x.field != y.field) return false;
  }
  return true;
}

void CheckRefRoundTrip(const std::string& text) {
  auto ref = ir::ParseJRef(text);
  if (!ref.ok()) return;
  std::string printed = ir::JRefToString(*ref);
  auto again = ir::ParseJRef(printed);
  if (!again.ok()) Die("printed reference does not parse", text + " -> " + printed);
  if (!SameRef(*ref, *again)) Die("reference changed by print -> parse", text + " -> " + printed);
}

// Every hole's reference, wherever it is nested.
void CheckHoles(const Value& v) {
  if (ir::IsHole(v)) CheckRefRoundTrip(v.Find("$ref")->as_string());
  if (v.is_map()) {
    for (const auto& [k, x] : v.as_map()) CheckHoles(x);
  } else if (v.is_list()) {
    for (const auto& x : v.as_list()) CheckHoles(x);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  auto jexpr = ir::ParseJson(lines[0]);
  if (!jexpr.ok()) {
    CheckRefRoundTrip(std::string(lines[0]));  // the bare reference syntax
    return 0;
  }
  std::vector<ir::LabeledMessage> trace;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto msg = ir::ParseJson(lines[i]);
    if (msg.ok()) trace.push_back({static_cast<int64_t>(i), std::move(*msg)});
  }
  CheckHoles(*jexpr);
  (void)ir::Instantiate(*jexpr, trace);
  ir::Value quoted = ir::QuoteLookalikes(*jexpr, {});
  if (ir::HasHoles(quoted)) Die("data kept a hole after quoting", quoted.ToString());
  auto result = ir::Instantiate(quoted, trace);
  if (!result.ok()) Die("quoted data failed to instantiate", std::string(result.status().message()));
  if (*result != *jexpr) Die("quoted data changed", result->ToString());
  return 0;
}
