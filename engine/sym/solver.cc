#include "engine/sym/solver.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include <z3++.h>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::sym {

struct Solver::Impl {
  z3::context ctx;
  z3::solver solver{ctx};
  // Translation memo; holds the TermRef so the node (and its address) lives.
  std::unordered_map<const TermNode*, std::pair<TermRef, z3::expr>> memo;
  std::unordered_map<uint64_t, Result> cache;

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

Solver::Solver(unsigned timeout_ms) : impl_(std::make_unique<Impl>()) {
  z3::params p(impl_->ctx);
  p.set("timeout", timeout_ms);
  impl_->solver.set(p);
}

Solver::~Solver() = default;

Solver::Result Solver::Check(const std::vector<TermRef>& constraints) {
  ++stats_.checks;
  std::vector<uint64_t> hashes;
  hashes.reserve(constraints.size());
  for (const auto& c : constraints) {
    if (c->op == TermOp::kConstBool) {
      if (!c->ival) {
        ++stats_.fast_path;
        return Result::kUnsat;
      }
      continue;
    }
    hashes.push_back(c->hash);
  }
  if (hashes.empty()) {
    ++stats_.fast_path;
    return Result::kSat;
  }
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  uint64_t key = absl::HashOf(hashes);
  auto it = impl_->cache.find(key);
  if (it != impl_->cache.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  if (impl_->memo.size() > 200000) impl_->memo.clear();
  if (impl_->cache.size() > 200000) impl_->cache.clear();
  ++stats_.z3_calls;
  auto start = std::chrono::steady_clock::now();
  Result r;
  impl_->solver.push();
  for (const auto& c : constraints)
    if (c->op != TermOp::kConstBool) impl_->solver.add(impl_->Translate(c));
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
  impl_->cache.emplace(key, r);
  return r;
}

bool Solver::MaybeSat(const std::vector<TermRef>& constraints, const TermRef& extra) {
  if (extra->op == TermOp::kConstBool) {
    if (!extra->ival) return false;
    return Check(constraints) != Result::kUnsat;
  }
  std::vector<TermRef> all = constraints;
  all.push_back(extra);
  return Check(all) != Result::kUnsat;
}

}  // namespace dualswarm::sym
