#include "engine/lang/branches.h"

#include "absl/strings/str_cat.h"

namespace dualswarm::lang {
namespace {

class Numberer {
 public:
  explicit Numberer(std::vector<Branch>* out) : out_(out) {}

  void Walk(Expr* e, const std::string& scope) {
    if (e == nullptr) return;
    switch (e->kind) {
      case ExprKind::kIf:
        e->branch = Add(e->args[1]->loc, BranchKind::kIfThen, 0, 2, scope);
        Add(e->args[2] ? e->args[2]->loc : e->loc, BranchKind::kIfElse, 1, 2, scope);
        break;
      case ExprKind::kMatch:
        for (size_t i = 0; i < e->arms.size(); ++i) {
          const int id = Add(e->arms[i].pattern.loc, BranchKind::kMatchArm, static_cast<int>(i),
                             static_cast<int>(e->arms.size()), scope);
          if (i == 0) e->branch = id;
        }
        break;
      case ExprKind::kEither:
      case ExprKind::kOneof:
      case ExprKind::kFreq: {
        const BranchKind kind = e->kind == ExprKind::kEither ? BranchKind::kEither : BranchKind::kAlternative;
        for (size_t i = 0; i < e->args.size(); ++i) {
          const int id = Add(e->args[i]->loc, kind, static_cast<int>(i), static_cast<int>(e->args.size()), scope);
          if (i == 0) e->branch = id;
        }
        break;
      }
      default:
        break;
    }
    for (auto& a : e->args) Walk(a.get(), scope);
    for (auto& s : e->stmts) Walk(s.value.get(), scope);
    Walk(e->tail.get(), scope);
    for (auto& arm : e->arms) Walk(arm.body.get(), scope);
  }

 private:
  int Add(Loc loc, BranchKind kind, int index, int count, const std::string& scope) {
    out_->push_back(Branch{loc, kind, index, count, scope});
    return static_cast<int>(out_->size() - 1);
  }

  std::vector<Branch>* out_;
};

}  // namespace

std::vector<Branch> NumberBranches(SpecAst* ast) {
  std::vector<Branch> branches;
  Numberer n(&branches);
  for (auto& f : ast->fns) n.Walk(f.body.get(), absl::StrCat("fn ", f.name));
  for (auto& h : ast->handlers) n.Walk(h.body.get(), h.role == Role::kOrigin ? "on recv (origin)" : "on recv");
  for (auto& h : ast->fault_handlers) n.Walk(h.body.get(), "on fault");
  for (auto& g : ast->gens) n.Walk(g.body.get(), absl::StrCat("gen ", g.name));
  return branches;
}

std::string BranchLabel(const Branch& b) {
  const std::string of = absl::StrCat(b.index + 1, " of ", b.count);
  switch (b.kind) {
    case BranchKind::kIfThen:
      return "if: then";
    case BranchKind::kIfElse:
      return "if: else";
    case BranchKind::kMatchArm:
      return absl::StrCat("match arm ", of);
    case BranchKind::kEither:
      return absl::StrCat("either alternative ", of);
    case BranchKind::kAlternative:
      return absl::StrCat("gen alternative ", of);
  }
  return "?";
}

}  // namespace dualswarm::lang
