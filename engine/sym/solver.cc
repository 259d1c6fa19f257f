#include "engine/sym/solver.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include <z3++.h>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::sym {

struct Solver::Impl {
  explicit Impl(unsigned timeout_ms) : solver(ctx) {
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    solver.set(p);
  }
  z3::context ctx;
  z3::solver solver;
  // Translation memo; holds the TermRef so the node (and its address) lives.
  std::unordered_map<const TermNode*, std::pair<TermRef, z3::expr>> memo;

  z3::expr Translate(const TermRef& t) {
    auto it = memo.find(t.get());
    if (it != memo.end()) return it->second.second;
    z3::expr e = Build(t);
    memo.emplace(t.get(), std::make_pair(t, e));
    return e;
  }

  z3::expr Build(const TermRef& t) {
    auto a = [&](int i) { return Translate(t->args[i]); };
    switch (t->op) {
      case TermOp::kVar: {
        std::string name = absl::StrCat(SortName(t->sort), "_", t->ival);
        switch (t->sort) {
          case Sort::kBool: return ctx.bool_const(name.c_str());
          case Sort::kInt: return ctx.int_const(name.c_str());
          case Sort::kString: return ctx.string_const(name.c_str());
        }
        break;
      }
      case TermOp::kConstBool: return ctx.bool_val(t->ival != 0);
      case TermOp::kConstInt: return ctx.int_val(static_cast<int64_t>(t->ival));
      // Byte-exact (Z3_mk_lstring): no escape processing, NULs kept, one
      // character per byte, as the concrete folding counts them.
      case TermOp::kConstString:
        return ctx.string_val(t->sval.data(), static_cast<unsigned>(t->sval.size()));
      case TermOp::kEq: return a(0) == a(1);
      case TermOp::kNot: return !a(0);
      case TermOp::kAnd: return a(0) && a(1);
      case TermOp::kOr: return a(0) || a(1);
      case TermOp::kAdd: return a(0) + a(1);
      case TermOp::kSub: return a(0) - a(1);
      case TermOp::kMul: return a(0) * a(1);
      case TermOp::kLt: return a(0) < a(1);
      case TermOp::kLe: return a(0) <= a(1);
      case TermOp::kConcat: return z3::concat(a(0), a(1));
      case TermOp::kLen: return a(0).length();
      case TermOp::kPrefixOf: return z3::prefixof(a(0), a(1));
      case TermOp::kSuffixOf: return z3::suffixof(a(0), a(1));
      case TermOp::kContains: return a(0).contains(a(1));
      case TermOp::kSubstr: return a(0).extract(a(1), a(2));
      case TermOp::kIte: return z3::ite(a(0), a(1), a(2));
    }
    return ctx.bool_val(true);
  }
};

Solver::Solver(unsigned timeout_ms) : timeout_ms_(timeout_ms) {}

Solver::~Solver() = default;

namespace {

// Whether t is a disequality between a string/int variable and a constant
// or another string/int variable.
bool IsSimpleDisequality(const TermRef& t) {
  if (t->op != TermOp::kNot || t->args[0]->op != TermOp::kEq) return false;
  const TermRef& a = t->args[0]->args[0];
  const TermRef& b = t->args[0]->args[1];
  if (a->sort == Sort::kBool) return false;
  return (a->op == TermOp::kVar || a->IsConst()) && (b->op == TermOp::kVar || b->IsConst());
}

}  // namespace

Solver::Result Solver::Check(const std::vector<TermRef>& constraints) {
  ++stats_.checks;
  std::vector<TermRef> live;
  live.reserve(constraints.size());
  for (const auto& c : constraints) {
    if (c->op == TermOp::kConstBool) {
      if (!c->ival) {
        ++stats_.fast_path;
        return Result::kUnsat;
      }
      continue;
    }
    live.push_back(c);
  }
  // Only disequalities over infinite sorts (string, int): always
  // satisfiable, since finitely many values are excluded.
  bool only_diseq = true;
  for (const auto& c : live) only_diseq &= IsSimpleDisequality(c);
  if (only_diseq) {
    ++stats_.fast_path;
    return Result::kSat;
  }
  std::vector<uint64_t> hashes;
  hashes.reserve(live.size());
  for (const auto& c : live) hashes.push_back(c->hash);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  uint64_t key = absl::HashOf(hashes);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  if (!impl_) impl_ = std::make_unique<Impl>(timeout_ms_);
  if (impl_->memo.size() > 200000) impl_->memo.clear();
  if (cache_.size() > 200000) cache_.clear();
  ++stats_.z3_calls;
  auto start = std::chrono::steady_clock::now();
  Result r;
  impl_->solver.push();
  for (const auto& c : live) impl_->solver.add(impl_->Translate(c));
  switch (impl_->solver.check()) {
    case z3::sat: r = Result::kSat; break;
    case z3::unsat: r = Result::kUnsat; break;
    default:
      r = Result::kUnknown;
      ++stats_.z3_unknown;
      break;
  }
  impl_->solver.pop();
  stats_.z3_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cache_.emplace(key, r);
  return r;
}

Solver::Result Solver::CheckAdded(const std::vector<TermRef>& base, const std::vector<TermRef>& added) {
  // Slice: the added constraints plus every base constraint connected to
  // them through shared variables. The rest was satisfiable on its own and
  // shares nothing with the slice, so it cannot make the whole unsat.
  std::vector<TermRef> vars;
  for (const auto& c : added) CollectVars(c, &vars);
  std::vector<TermRef> slice = added;
  std::vector<bool> taken(base.size(), false);
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t i = 0; i < base.size(); ++i) {
      if (taken[i]) continue;
      std::vector<TermRef> cv;
      CollectVars(base[i], &cv);
      bool shares = false;
      for (const auto& v : cv)
        for (const auto& w : vars)
          if (v->ival == w->ival && v->sort == w->sort) shares = true;
      if (!shares) continue;
      taken[i] = true;
      grew = true;
      slice.push_back(base[i]);
      for (const auto& v : cv) {
        bool have = false;
        for (const auto& w : vars) have |= v->ival == w->ival && v->sort == w->sort;
        if (!have) vars.push_back(v);
      }
    }
  }
  return Check(slice);
}

bool Solver::MaybeSat(const std::vector<TermRef>& constraints, const TermRef& extra) {
  if (extra->op == TermOp::kConstBool) return extra->ival != 0;
  return CheckAdded(constraints, {extra}) != Result::kUnsat;
}

}  // namespace dualswarm::sym
