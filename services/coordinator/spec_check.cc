#include "services/coordinator/spec_check.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"

namespace dualswarm::coord {
namespace {

// Parses "FILE:LINE:COL: MESSAGE"; FILE is the name we passed in (it may
// itself contain colons), so it is stripped as a prefix.
SpecDiagnostic ParseLine(const std::string& file, absl::string_view line) {
  SpecDiagnostic d;
  d.file = file;
  absl::string_view rest = line;
  if (absl::ConsumePrefix(&rest, file) && absl::ConsumePrefix(&rest, ":")) {
    std::vector<absl::string_view> parts = absl::StrSplit(rest, absl::MaxSplits(':', 2));
    int l = 0, c = 0;
    if (parts.size() == 3 && absl::SimpleAtoi(parts[0], &l) && absl::SimpleAtoi(parts[1], &c)) {
      d.line = l;
      d.column = c;
      d.message = std::string(absl::StripLeadingAsciiWhitespace(parts[2]));
      return d;
    }
  }
  d.message = std::string(line);
  return d;
}

}  // namespace

std::string SpecCheck::ErrorText() const {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "\n";
    if (e.line > 0)
      absl::StrAppend(&out, e.file, ":", e.line, ":", e.column, ": ", e.message);
    else
      absl::StrAppend(&out, e.file, ": ", e.message);
  }
  return out;
}

SpecCheck CheckSpec(const std::string& file_name, const std::string& source) {
  SpecCheck out;
  auto spec = lang::LoadSpec(file_name, source);
  if (spec.ok()) {
    out.valid = true;
    out.name = (*spec)->name;
    out.choice_sites = (*spec)->ast.num_choice_sites;
    for (const auto& g : (*spec)->ast.gens) out.gens.push_back(g.name);
    // A library interface's calls come from its signature, under the
    // default generator's name (engine/harness/signature_gen.h).
    if (!(*spec)->ast.ops.empty() && std::find(out.gens.begin(), out.gens.end(), "request") == out.gens.end())
      out.gens.push_back("request");
    out.origin_role = lang::Interpreter(spec->get()).HasOriginRole();
    return out;
  }
  for (absl::string_view line : absl::StrSplit(spec.status().message(), '\n', absl::SkipEmpty()))
    out.errors.push_back(ParseLine(file_name, line));
  if (out.errors.empty()) out.errors.push_back({file_name, 0, 0, std::string(spec.status().message())});
  return out;
}

}  // namespace dualswarm::coord
