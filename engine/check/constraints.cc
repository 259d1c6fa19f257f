#include "engine/check/constraints.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/sym/difference_logic.h"

namespace dualswarm::check {
namespace {

using sym::TermRef;

bool IsVarEqConst(const TermRef& c) {
  return c->op == sym::TermOp::kEq && c->args[0]->op == sym::TermOp::kVar && c->args[1]->IsConst();
}

std::string Describe(const sym::Bindings& b) {
  std::vector<std::string> parts;
  for (const auto& [id, t] : b) parts.push_back(absl::StrCat("#", sym::VarIdText(id), " = ", sym::TermToString(t)));
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ", ");
}

}  // namespace

bool Constrain(sym::Solver* solver, Explanation* e, const std::vector<TermRef>& cs, std::string* why) {
  if (cs.empty()) return true;
  std::vector<TermRef> all = e->pc;
  all.insert(all.end(), cs.begin(), cs.end());
  sym::Bindings b;
  while (true) {
    bool bound = false;
    std::vector<TermRef> rest;
    rest.reserve(all.size());
    for (const auto& c0 : all) {
      TermRef c = b.empty() ? c0 : sym::Substitute(c0, b);
      if (c->op == sym::TermOp::kConstBool) {
        if (c->ival) continue;
        *why = absl::StrCat("constraint ", sym::TermToString(c0), " is false once ", Describe(b));
        return false;
      }
      if (IsVarEqConst(c) && !b.count(c->args[0]->ival)) {
        b[c->args[0]->ival] = c->args[1];
        bound = true;
        continue;
      }
      rest.push_back(std::move(c));
    }
    all = std::move(rest);
    if (!bound) break;
  }
  if (!b.empty()) {
    auto g = std::make_shared<std::vector<ir::Value>>();
    g->reserve(e->globals->size());
    for (const auto& v : *e->globals) g->push_back(ir::SubstituteValue(v, b));
    e->globals = std::move(g);
    e->owed.ForEachMutable([&](Owed& o) { o.msg = ir::SubstituteValue(o.msg, b); });
    e->origin.ForEachPoolEntryMutable([&](PoolEntry& p) { p.msg = ir::SubstituteValue(p.msg, b); });
  }
  // Only constraints that are new or changed by the bindings can make the
  // (previously satisfiable) set unsatisfiable.
  std::vector<TermRef> base, added;
  for (const auto& c : all) {
    bool old = false;
    for (const auto& o : e->pc) old |= o.get() == c.get();
    (old ? base : added).push_back(c);
  }
  e->pc = std::move(all);
  if (!added.empty() && solver->CheckAdded(base, added) == sym::Solver::Result::kUnsat) {
    std::vector<std::string> parts;
    for (const auto& c : e->pc) parts.push_back(sym::TermToString(c));
    *why = absl::StrCat("constraints cannot all hold: ", absl::StrJoin(parts, " && "),
                        b.empty() ? "" : absl::StrCat(" (with ", Describe(b), ")"));
    return false;
  }
  return true;
}

void DropUnreachableConstraints(Explanation* e) {
  if (e->pc.empty()) return;
  std::vector<TermRef> live;
  for (const auto& g : *e->globals) ir::CollectValueVars(g, &live);
  e->owed.ForEach([&](size_t, const Owed& o) { ir::CollectValueVars(o.msg, &live); });
  e->origin.ForEachPoolEntry([&](const PoolEntry& p) { ir::CollectValueVars(p.msg, &live); });
  auto is_live = [&](const TermRef& v) {
    for (const auto& w : live)
      if (w->ival == v->ival && w->sort == v->sort) return true;
    return false;
  };
  // Counters nothing reaches any more leave their implied bounds, not a
  // chain as long as the history (difference_logic.h).
  sym::EliminateUnreachableIntVariables(&e->pc, is_live);
  std::vector<std::vector<TermRef>> vars(e->pc.size());
  for (size_t i = 0; i < e->pc.size(); ++i) sym::CollectVars(e->pc[i], &vars[i]);
  std::vector<bool> keep(e->pc.size(), false);
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t i = 0; i < e->pc.size(); ++i) {
      if (keep[i]) continue;
      bool touches = false;
      for (const auto& v : vars[i]) touches |= is_live(v);
      if (!touches) continue;
      keep[i] = true;
      grew = true;
      for (const auto& v : vars[i])
        if (!is_live(v)) live.push_back(v);
    }
  }
  std::vector<TermRef> kept;
  for (size_t i = 0; i < e->pc.size(); ++i)
    if (keep[i]) kept.push_back(e->pc[i]);
  e->pc = std::move(kept);
}

}  // namespace dualswarm::check
