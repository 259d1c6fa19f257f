#include "workers/runner/choice_sites.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

void Walk(const lang::Expr* e, const std::function<void(const lang::Expr&)>& visit) {
  if (e == nullptr) return;
  visit(*e);
  for (const auto& a : e->args) Walk(a.get(), visit);
  for (const auto& s : e->stmts) Walk(s.value.get(), visit);
  Walk(e->tail.get(), visit);
  for (const auto& arm : e->arms) Walk(arm.body.get(), visit);
}

}  // namespace

std::vector<ChoiceSite> ChoiceSites(const lang::Spec& spec) {
  std::vector<ChoiceSite> sites;
  for (const auto& g : spec.ast.gens)
    Walk(g.body.get(), [&](const lang::Expr& e) {
      if ((e.kind != lang::ExprKind::kOneof && e.kind != lang::ExprKind::kFreq) || e.site < 0) return;
      sites.push_back({e.site,
                       absl::StrCat(lang::FormatLoc(spec.ast.file, e.loc), " (",
                                    e.kind == lang::ExprKind::kOneof ? "oneof" : "freq", " in gen ", g.name, ")"),
                       static_cast<int>(e.args.size())});
    });
  // A library interface's generator: which op, which law (signature_gen.h).
  if (!spec.ast.ops.empty()) {
    const int n = spec.ast.num_choice_sites;
    sites.push_back(
        {n - 2, "the signature's operations, in the order declared", static_cast<int>(spec.ast.ops.size())});
    sites.push_back({n - 1, "the laws, in the order declared", static_cast<int>(spec.ast.laws.size())});
  }
  std::sort(sites.begin(), sites.end(), [](const ChoiceSite& a, const ChoiceSite& b) { return a.number < b.number; });
  return sites;
}

absl::Status CheckFeatureMask(const lang::Spec& spec, const harness::FeatureMask& mask) {
  const int n = spec.ast.num_choice_sites;
  for (size_t site = static_cast<size_t>(std::max(n, 0)); site < mask.disabled.size(); ++site) {
    if (mask.disabled[site] == 0) continue;
    std::string known;
    for (const ChoiceSite& s : ChoiceSites(spec))
      absl::StrAppend(&known, "\n  site ", s.number, ": ", s.where, ", ", s.alternatives, " alternatives (bits 0-",
                      s.alternatives - 1, ")");
    return absl::InvalidArgumentError(absl::StrCat(
        "feature mask \"", mask.ToString(), "\": spec '", spec.name, "' has no choice site ", site,
        n == 0 ? " (it has no oneof/freq sites at all)" : absl::StrCat("; its sites (0-", n - 1, "):", known)));
  }
  return absl::OkStatus();
}

}  // namespace dualswarm::workers
