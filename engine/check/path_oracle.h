// PathOracle: enumerates the paths of one handler run. The interpreter asks
// it at every `either`, `fresh` and symbolic branch; the oracle answers from
// a choice vector and replays the handler with the next vector until every
// path is done (stateless search). Symbolic branches consult the solver and
// fork only when both outcomes are possible.
#ifndef DUALSWARM_ENGINE_CHECK_PATH_ORACLE_H_
#define DUALSWARM_ENGINE_CHECK_PATH_ORACLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/lang/interp.h"
#include "engine/sym/solver.h"

namespace dualswarm::check {

// Enumerates the paths of one handler invocation by replaying it with
// successive choice vectors (stateless search), consulting the solver at
// symbolic branches.
class PathOracle : public lang::Oracle {
 public:
  // Which step the handler runs for, when its `fresh` variables are to be
  // numbered by it (sym::StepVarId): the request it takes, n on the
  // clients' side or the origin's.
  struct Step {
    bool origin_side = false;
    int64_t n = 0;
  };

  // `poll` (may be empty) is asked during long handler runs whether the
  // checker must stop (its time bound, cancellation). With `step`, the k-th
  // `fresh` of a path is the step's variable k, the same in every
  // explanation that takes the step, and next_fresh stays as it is (unless
  // the step has too many to encode); without, variables are numbered from
  // next_fresh on (a search that may take one request twice in an
  // explanation, as a probe does, must number them so).
  PathOracle(sym::Solver* solver, const std::vector<sym::TermRef>* base_pc, int64_t next_fresh,
             std::function<absl::Status()> poll = {}, std::optional<Step> step = std::nullopt)
      : solver_(solver), base_pc_(base_pc), base_fresh_(next_fresh), poll_(std::move(poll)), step_(step) {}

  absl::Status Poll() override { return poll_ ? poll_() : absl::OkStatus(); }

  void Restart() {
    pos_ = 0;
    added_.clear();
    pc_ = *base_pc_;
    next_fresh_ = base_fresh_;
    step_fresh_ = 0;
    dead_ = false;
  }
  // Advances to the next unexplored choice vector; false when all are done.
  bool NextPath() {
    choices_.resize(pos_);
    arity_.resize(pos_);
    while (!choices_.empty() && choices_.back() + 1 >= arity_.back()) {
      choices_.pop_back();
      arity_.pop_back();
    }
    if (choices_.empty()) return false;
    ++choices_.back();
    return true;
  }

  int Choose(int n, lang::Loc) override {
    if (pos_ < choices_.size()) return choices_[pos_++];
    choices_.push_back(0);
    arity_.push_back(n);
    ++pos_;
    return 0;
  }
  ir::Value Fresh(sym::Sort sort, lang::Loc loc) override {
    int64_t id = step_ ? sym::StepVarId(step_->origin_side, step_->n, step_fresh_++) : -1;
    if (id < 0) id = next_fresh_++;
    return ir::Value::Sym(sym::MkVar(sort, id, absl::StrCat("fresh@", loc.line, ":", loc.col)));
  }
  bool Decide(const sym::TermRef& c, lang::Loc) override {
    bool can_true = solver_->MaybeSat(pc_, c);
    sym::TermRef nc = sym::MkNot(c);
    bool can_false = solver_->MaybeSat(pc_, nc);
    if (can_true && can_false) {
      bool take = Choose(2, {}) == 0;
      Add(take ? c : nc);
      return take;
    }
    if (!can_true && !can_false) dead_ = true;  // only if the base was unsat
    return can_true;
  }
  bool Assume(const sym::TermRef& c, lang::Loc) override {
    if (!solver_->MaybeSat(pc_, c)) return false;
    Add(c);
    return true;
  }
  bool Possible(const sym::TermRef& c) override { return solver_->MaybeSat(pc_, c); }

  const std::vector<sym::TermRef>& added() const { return added_; }
  int64_t next_fresh() const { return next_fresh_; }
  bool dead() const { return dead_; }

 private:
  void Add(const sym::TermRef& c) {
    added_.push_back(c);
    pc_.push_back(c);
  }
  sym::Solver* solver_;
  const std::vector<sym::TermRef>* base_pc_;
  int64_t base_fresh_;
  std::function<absl::Status()> poll_;
  std::optional<Step> step_;
  int step_fresh_ = 0;  // the step's variables minted on this path
  std::vector<int> choices_, arity_;
  size_t pos_ = 0;
  std::vector<sym::TermRef> added_, pc_;
  int64_t next_fresh_ = 0;
  bool dead_ = false;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_PATH_ORACLE_H_
