#include "engine/lang/interp.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/lang/limits.h"
#include "engine/lang/stack_budget.h"

namespace dualswarm::lang {
namespace {

using ir::Value;
using sym::TermRef;

// Internal control flow; never escapes this file.
struct SpecFault {
  Loc loc;
  std::string msg;
};
struct PathKilled {};
// The oracle asked to stop (a time bound, a cancellation).
struct Stopped {
  absl::Status status;
};
// A gen alternative could not produce a value (e.g. pick from an empty list).
struct GenNoChoice {
  Loc loc;
  std::string why;
};
}  // namespace

bool IsAbstractType(const Spec& spec, const std::string& type) {
  for (const auto& t : spec.ast.types)
    if (t.name == type) return true;
  return false;
}

bool OfSignatureType(const Spec& spec, const std::string& type, const Value& v) {
  if (IsAbstractType(spec, type)) {
    return v.is_map() && v.as_map().size() == 1 && v.as_map()[0].first == absl::StrCat("$", type) &&
           v.as_map()[0].second.is_int();
  }
  if (type == "int") return v.is_int();
  if (type == "bool") return v.is_bool();
  if (type == "string") return v.is_string();
  if (type == "list") return v.is_list();
  if (type == "map") return v.is_map();
  return true;  // any, a gen block's type: whatever it draws
}

std::string SignatureTypeText(const Spec& spec, const std::string& type) {
  if (IsAbstractType(spec, type)) return absl::StrCat("a handle {\"$", type, "\": N}");
  return absl::StrCat("of type ", type);
}

namespace {

// An op call of a law ended its run (OpCalls::Call did not return a value).
struct OpCallEnded {
  OpAnswer answer;
  std::string op;
};

// Counts one level of `*depth` for the life of a scope (also when an
// exception unwinds it: gen alternatives are retried after GenNoChoice).
class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
  ~DepthGuard() { --*depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int* depth_;
};

std::string Show(const Value& v) {
  std::string s = v.ToString();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

class Eval {
 public:
  Eval(const Spec* spec, std::vector<Value>* globals, Oracle* oracle, StepOutput* out,
       const Interpreter::Cluster& cluster)
      : spec_(spec),
        cluster_(cluster),
        globals_(globals),
        oracle_(oracle),
        out_(out),
        branches_(out != nullptr ? out->branches : nullptr),
        stack_base_(reinterpret_cast<uintptr_t>(__builtin_frame_address(0))),
        stack_budget_(StackBudgetFrom(stack_base_, kMaxEvalStackBytes)) {}

  void set_gen(GenContext* g) { gen_ = g; }
  void set_op_calls(OpCalls* c) { op_calls_ = c; }
  void set_branches(std::vector<int32_t>* b) { branches_ = b; }

  Value Run(const Expr* e, std::vector<Value>* frame) {
    frame_ = frame;
    return E(e);
  }

 private:
  [[noreturn]] void Fault(Loc loc, std::string msg) { throw SpecFault{loc, std::move(msg)}; }

  [[noreturn]] void TypeFault(Loc loc, absl::string_view what, const Value& v) {
    Fault(loc, absl::StrCat(what, ", got ", Value::KindName(v.kind()), " ", Show(v)));
  }

  bool Truth(const Value& v, Loc loc) {
    if (v.is_bool()) return v.as_bool();
    if (v.is_sym() && v.as_term()->sort == sym::Sort::kBool) return oracle_->Decide(v.as_term(), loc);
    TypeFault(loc, "condition must be a bool", v);
  }

  TermRef ScalarTerm(const Value& v, sym::Sort want, Loc loc, absl::string_view what) {
    auto s = v.scalar_sort();
    if (!s || *s != want) TypeFault(loc, absl::StrCat(what, " must be ", sym::SortName(want)), v);
    return v.ToTerm();
  }

  const std::string& ConcreteKey(const Value& v, Loc loc) {
    if (v.is_string()) return v.as_string();
    if (v.is_sym())
      Fault(loc, absl::StrCat("map key must be concrete, got the symbolic value ", Show(v),
                              " (maps are indexed by known strings)"));
    TypeFault(loc, "map key must be a string", v);
  }

  const std::string& ConcreteString(const Value& v, Loc loc, absl::string_view what) {
    if (v.is_string()) return v.as_string();
    if (v.is_sym())
      Fault(loc, absl::StrCat(what, " must be a concrete string here; symbolic ", Show(v), " cannot be used"));
    TypeFault(loc, absl::StrCat(what, " must be a string"), v);
  }

  int64_t ConcreteInt(const Value& v, Loc loc, absl::string_view what) {
    if (v.is_int()) return v.as_int();
    if (v.is_sym())
      Fault(loc, absl::StrCat(what, " must be a concrete int here; symbolic ", Show(v), " cannot be used"));
    TypeFault(loc, absl::StrCat(what, " must be an int"), v);
  }

  const Value& NeedMap(const Value& v, Loc loc, absl::string_view what) {
    if (!v.is_map()) TypeFault(loc, absl::StrCat(what, " needs a map"), v);
    return v;
  }

  // Structural equality that builds terms when symbolic leaves meet; costs
  // a step per node it may visit.
  Value Equal(const Value& a, const Value& b) {
    Charge(std::min(a.TreeSize(), b.TreeSize()));
    return EqualWalk(a, b);
  }

  Value EqualWalk(const Value& a, const Value& b) {
    if (a.IsConcrete() && b.IsConcrete()) return Value::Bool(a == b);
    if (a.is_sym() || b.is_sym()) {
      auto sa = a.scalar_sort(), sb = b.scalar_sort();
      if (!sa || !sb || *sa != *sb) return Value::Bool(false);
      return Value::Sym(sym::MkEq(a.ToTerm(), b.ToTerm()));
    }
    if (a.kind() != b.kind()) return Value::Bool(false);
    TermRef acc = sym::MkBool(true);
    switch (a.kind()) {
      case Value::Kind::kList: {
        const auto& la = a.as_list();
        const auto& lb = b.as_list();
        if (la.size() != lb.size()) return Value::Bool(false);
        for (size_t i = 0; i < la.size(); ++i) {
          acc = sym::MkAnd(acc, EqualWalk(la[i], lb[i]).ToTerm());
          if (acc->op == sym::TermOp::kConstBool && !acc->ival) break;
        }
        break;
      }
      case Value::Kind::kMap: {
        const auto& ma = a.as_map();
        const auto& mb = b.as_map();
        if (ma.size() != mb.size()) return Value::Bool(false);
        for (size_t i = 0; i < ma.size(); ++i) {
          if (ma[i].first != mb[i].first) return Value::Bool(false);
          acc = sym::MkAnd(acc, EqualWalk(ma[i].second, mb[i].second).ToTerm());
          if (acc->op == sym::TermOp::kConstBool && !acc->ival) break;
        }
        break;
      }
      case Value::Kind::kOption:
        if (a.has_value() != b.has_value()) return Value::Bool(false);
        if (!a.has_value()) return Value::Bool(true);
        return EqualWalk(a.inner(), b.inner());
      default:
        return Value::Bool(a == b);
    }
    return Value::Sym(acc);
  }

  // Evaluates one expression within the limits of limits.h: steps, native
  // stack (evaluation depth) and the size of the value it produces.
  Value E(const Expr* e) {
    current_loc_ = e->loc;
    Charge(1);
    if (StackInUse() > stack_budget_)
      Fault(e->loc, absl::StrCat("evaluation nested too deeply: more than ", stack_budget_ / 1024,
                                 " KiB of stack (limit: evaluation stack)"));
    Value v = EvalNode(e);
    CheckSize(v, e->loc);
    return v;
  }

  // Counts `n` more steps of work (an operation that visits or copies n
  // nodes, or 16n string bytes) against kMaxEvalSteps, and asks the oracle
  // whether to stop once every kPollEverySteps (however large the jumps).
  void Charge(uint64_t n) {
    steps_ = sym::SaturatingAdd(steps_, n);
    if (steps_ > kMaxEvalSteps)
      Fault(current_loc_,
            absl::StrCat("evaluation took more than ", kMaxEvalSteps, " steps (limit: evaluation steps)"));
    if (steps_ >= next_poll_) {
      next_poll_ = steps_ + kPollEverySteps;
      if (absl::Status s = oracle_->Poll(); !s.ok()) throw Stopped{std::move(s)};
    }
  }

  // Bytes of native stack between the evaluation's start and here (the
  // stack grows down on every platform this builds for).
  size_t StackInUse() const {
    auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    return here < stack_base_ ? stack_base_ - here : 0;
  }

  void CheckStringBytes(size_t bytes, Loc loc) {
    if (bytes > kMaxStringBytes)
      Fault(loc, absl::StrCat("a string of ", bytes, " bytes, more than ", kMaxStringBytes, " (limit: string bytes)"));
  }

  void CheckValueNodes(uint64_t nodes, Loc loc) {
    if (nodes > kMaxValueNodes)
      Fault(loc, absl::StrCat("a value of more than ", kMaxValueNodes,
                              " nodes (shared parts counted each time; limit: value nodes)"));
  }

  void CheckSize(const Value& v, Loc loc) {
    if (v.is_string()) {
      CheckStringBytes(v.as_string().size(), loc);
      return;
    }
    CheckValueNodes(v.TreeSize(), loc);
    if (v.Depth() > kMaxValueDepth)
      Fault(loc,
            absl::StrCat("a value nested ", v.Depth(), " deep, more than ", kMaxValueDepth, " (limit: value depth)"));
  }

  // One expression node: the dispatch. Each kind that does more than
  // return a value has its own function below.
  Value EvalNode(const Expr* e) {
    switch (e->kind) {
      case ExprKind::kLiteral:
        return e->literal;
      case ExprKind::kName:
        if (e->ref != RefKind::kLocal && static_cast<size_t>(e->slot) >= globals_->size())
          Fault(e->loc, absl::StrCat("'", e->name, "' is server state, which this code cannot read"));
        return e->ref == RefKind::kLocal ? (*frame_)[e->slot] : (*globals_)[e->slot];
      case ExprKind::kSome:
        return Value::Some(E(e->args[0].get()));
      case ExprKind::kRecord:
        return Record(e);
      case ExprKind::kList:
        return List(e);
      case ExprKind::kField:
        return Field(e);
      case ExprKind::kIndex:
        return Index(e);
      case ExprKind::kUnwrap:
        return Unwrap(e);
      case ExprKind::kCall:
        return Call(e);
      case ExprKind::kUnary:
        return Unary(e);
      case ExprKind::kBinary:
        return Binary(e);
      case ExprKind::kAnd:
      case ExprKind::kOr:
        return ShortCircuit(e);
      case ExprKind::kIf:
        if (Truth(E(e->args[0].get()), e->args[0]->loc)) {
          Took(e, 0);
          return E(e->args[1].get());
        }
        Took(e, 1);
        return e->args[2] ? E(e->args[2].get()) : Value::Null();
      case ExprKind::kMatch:
        return Match(e);
      case ExprKind::kEither: {
        const int k = oracle_->Choose(static_cast<int>(e->args.size()), e->loc);
        Took(e, k);
        return E(e->args[static_cast<size_t>(k)].get());
      }
      case ExprKind::kFresh:
        return oracle_->Fresh(e->fresh_sort, e->loc);
      case ExprKind::kBlock:
        return Block(e);
      case ExprKind::kAssume:
        return Assume(e);
      case ExprKind::kAssert:
        return Assert(e);
      case ExprKind::kSend:
        return Send(e);
      case ExprKind::kOneof:
      case ExprKind::kFreq:
        return Alternative(e);
    }
    Fault(e->loc, "internal error: unknown expression");
  }

  Value Record(const Expr* e) {
    ir::MapEntries entries;
    entries.reserve(e->keys.size());
    for (size_t i = 0; i < e->keys.size(); ++i) entries.emplace_back(e->keys[i], E(e->args[i].get()));
    return Value::Map(std::move(entries));
  }

  Value List(const Expr* e) {
    std::vector<Value> items;
    items.reserve(e->args.size());
    for (const auto& a : e->args) items.push_back(E(a.get()));
    return Value::List(std::move(items));
  }

  // r.name: the field of a record; a missing field names those it has.
  Value Field(const Expr* e) {
    Value base = E(e->args[0].get());
    if (base.is_option())
      Fault(e->loc, absl::StrCat("field '", e->name, "' of an option; unwrap it first with `!` or `match`"));
    if (!base.is_map()) TypeFault(e->loc, absl::StrCat("field '", e->name, "' needs a record"), base);
    const Value* f = base.Find(e->name);
    if (f == nullptr) {
      std::vector<std::string> names;
      for (const auto& [k, v] : base.as_map()) names.push_back(k);
      Fault(e->loc, absl::StrCat("record has no field '", e->name, "' (fields: ", absl::StrJoin(names, ", "),
                                 "); use has()/get() for optional fields"));
    }
    return *f;
  }

  // base[idx]: a list element (a concrete index in range) or a map entry
  // (a concrete key that is present).
  Value Index(const Expr* e) {
    Value base = E(e->args[0].get());
    Value idx = E(e->args[1].get());
    if (base.is_list()) {
      int64_t i = ConcreteInt(idx, e->args[1]->loc, "list index");
      const auto& l = base.as_list();
      if (i < 0 || i >= static_cast<int64_t>(l.size()))
        Fault(e->loc, absl::StrCat("list index ", i, " out of range (length ", l.size(), ")"));
      return l[static_cast<size_t>(i)];
    }
    if (!base.is_map()) TypeFault(e->loc, "indexing needs a map or a list", base);
    const std::string& k = ConcreteKey(idx, e->args[1]->loc);
    const Value* f = base.Find(k);
    if (f == nullptr) Fault(e->loc, absl::StrCat("key \"", k, "\" is absent; check with has() or use get()"));
    return *f;
  }

  Value Unwrap(const Expr* e) {
    Value o = E(e->args[0].get());
    if (!o.is_option()) TypeFault(e->loc, "`!` unwraps an option", o);
    if (!o.has_value()) Fault(e->loc, "unwrapped `none` with `!`");
    return o.inner();
  }

  // `!v` and `-v`, concrete or symbolic.
  Value Unary(const Expr* e) {
    Value v = E(e->args[0].get());
    if (e->name == "!") {
      if (v.is_bool()) return Value::Bool(!v.as_bool());
      return Value::Sym(sym::MkNot(ScalarTerm(v, sym::Sort::kBool, e->loc, "operand of `!`")));
    }
    if (v.is_int()) {
      if (v.as_int() == INT64_MIN) Fault(e->loc, "integer overflow in `-`");
      return Value::Int(-v.as_int());
    }
    return Value::Sym(sym::MkSub(sym::MkInt(0), ScalarTerm(v, sym::Sort::kInt, e->loc, "operand of `-`")));
  }

  // `&&` and `||`: the right operand runs only when the left one does not
  // decide (a symbolic left operand forks the path in Truth).
  Value ShortCircuit(const Expr* e) {
    const bool is_and = e->kind == ExprKind::kAnd;
    Value l = E(e->args[0].get());
    if (Truth(l, e->args[0]->loc) != is_and) return Value::Bool(!is_and);
    Value r = E(e->args[1].get());
    if (r.is_bool() || (r.is_sym() && r.as_term()->sort == sym::Sort::kBool)) return r;
    TypeFault(e->args[1]->loc, absl::StrCat("operand of `", is_and ? "&&" : "||", "` must be a bool"), r);
  }

  // Records branch `arm` of e (branches.h) when branches are recorded.
  void Took(const Expr* e, int arm) {
    if (branches_ != nullptr && e->branch >= 0) branches_->push_back(e->branch + arm);
  }

  Value Match(const Expr* e) {
    Value v = E(e->args[0].get());
    for (size_t i = 0; i < e->arms.size(); ++i)
      if (MatchPattern(e->arms[i].pattern, v)) {
        Took(e, static_cast<int>(i));
        return E(e->arms[i].body.get());
      }
    Fault(e->loc, absl::StrCat("no `match` arm matches ", Show(v)));
  }

  // { stmt; ... tail }: `let`s and assignments write their slot.
  Value Block(const Expr* e) {
    for (const auto& s : e->stmts) {
      Value v = E(s.value.get());
      if (s.kind == Stmt::Kind::kExpr) continue;
      if (s.ref == RefKind::kLocal) {
        (*frame_)[s.slot] = std::move(v);
      } else {
        if (static_cast<size_t>(s.slot) >= globals_->size())
          Fault(s.loc, absl::StrCat("'", s.name, "' is server state, which this code cannot assign"));
        (*globals_)[s.slot] = std::move(v);
      }
    }
    return e->tail ? E(e->tail.get()) : Value::Null();
  }

  // assume(c): a path where c is false does not exist (symbolic c becomes
  // a path constraint).
  Value Assume(const Expr* e) {
    Value c = E(e->args[0].get());
    if (c.is_bool()) {
      if (!c.as_bool()) throw PathKilled{};
      return Value::Null();
    }
    TermRef t = ScalarTerm(c, sym::Sort::kBool, e->loc, "`assume` condition");
    if (!oracle_->Assume(t, e->loc)) throw PathKilled{};
    return Value::Null();
  }

  // assert(c): a spec error when c may be false on this path.
  Value Assert(const Expr* e) {
    Value c = E(e->args[0].get());
    if (c.is_bool()) {
      if (!c.as_bool()) Fault(e->loc, "assertion failed");
      return Value::Null();
    }
    TermRef t = ScalarTerm(c, sym::Sort::kBool, e->loc, "`assert` condition");
    if (oracle_->Possible(sym::MkNot(t)))
      Fault(e->loc, absl::StrCat("assertion may fail: ", sym::TermToString(t), " does not hold on every path"));
    return Value::Null();
  }

  Value Send(const Expr* e) {
    const Expr* to = e->args[0].get();
    const bool to_origin = to->kind == ExprKind::kCall && to->builtin == Builtin::kOrigin;
    Value conn = E(to_origin ? to->args[0].get() : to);
    if (to_origin && !conn.IsConcrete())
      Fault(to->loc, absl::StrCat("the tag of `send origin(T)` must be concrete, not ", conn.ToString()));
    Value msg = E(e->args[1].get());
    if (out_ == nullptr) Fault(e->loc, "`send` is not allowed here");
    out_->sends.push_back({std::move(conn), std::move(msg), e->loc, to_origin});
    return Value::Null();
  }

  // oneof/freq in a `gen` block: an alternative chosen by weight; one that
  // finds nothing to generate is excluded and another chosen.
  Value Alternative(const Expr* e) {
    if (gen_ == nullptr) Fault(e->loc, "`oneof`/`freq` only run in the tester's `gen` blocks");
    std::vector<int64_t> weights = e->weights;
    if (weights.empty()) weights.assign(e->args.size(), 1);
    std::vector<bool> excluded(e->args.size(), false);
    GenNoChoice last{e->loc, "no alternative is enabled"};
    while (true) {
      int k = gen_->ChooseAlternative(e->site, weights, excluded);
      if (k < 0) throw last;
      const size_t taken_before = branches_ != nullptr ? branches_->size() : 0;
      try {
        Took(e, k);
        return E(e->args[static_cast<size_t>(k)].get());
      } catch (const GenNoChoice& g) {
        if (branches_ != nullptr) branches_->resize(taken_before);  // it generated nothing
        last = g;
        excluded[static_cast<size_t>(k)] = true;
      }
    }
  }

  bool MatchPattern(const Pattern& p, const Value& v) {
    switch (p.kind) {
      case Pattern::Kind::kWildcard:
        return true;
      case Pattern::Kind::kBind:
        (*frame_)[p.slot] = v;
        return true;
      case Pattern::Kind::kNone:
        return v.is_option() && !v.has_value();
      case Pattern::Kind::kSome:
        return v.is_option() && v.has_value() && MatchPattern(p.subs[0], v.inner());
      case Pattern::Kind::kRecord: {
        if (!v.is_map()) return false;
        for (size_t i = 0; i < p.keys.size(); ++i) {
          const Value* f = v.Find(p.keys[i]);
          if (f == nullptr || !MatchPattern(p.subs[i], *f)) return false;
        }
        return true;
      }
      case Pattern::Kind::kLiteral: {
        Value eq = Equal(v, p.literal);
        if (eq.is_bool()) return eq.as_bool();
        return oracle_->Decide(eq.as_term(), p.loc);
      }
    }
    return false;
  }

  Value Compare(const Expr* e, const Value& a, const Value& b) {
    const std::string& op = e->name;
    if (a.is_string() && b.is_string()) {
      int c = a.as_string().compare(b.as_string());
      if (op == "<") return Value::Bool(c < 0);
      if (op == "<=") return Value::Bool(c <= 0);
      if (op == ">") return Value::Bool(c > 0);
      return Value::Bool(c >= 0);
    }
    TermRef x = ScalarTerm(a, sym::Sort::kInt, e->loc, absl::StrCat("left operand of `", op, "`"));
    TermRef y = ScalarTerm(b, sym::Sort::kInt, e->loc, absl::StrCat("right operand of `", op, "`"));
    if (op == "<") return Value::Sym(sym::MkLt(x, y));
    if (op == "<=") return Value::Sym(sym::MkLe(x, y));
    if (op == ">") return Value::Sym(sym::MkLt(y, x));
    return Value::Sym(sym::MkLe(y, x));
  }

  Value Binary(const Expr* e) {
    Value a = E(e->args[0].get());
    Value b = E(e->args[1].get());
    const std::string& op = e->name;
    if (op == "==") return Equal(a, b);
    if (op == "!=") {
      Value eq = Equal(a, b);
      return eq.is_bool() ? Value::Bool(!eq.as_bool()) : Value::Sym(sym::MkNot(eq.as_term()));
    }
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return Compare(e, a, b);
    if (op == "+") {
      if (a.is_int() && b.is_int()) {
        int64_t r;
        if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) Fault(e->loc, "integer overflow in `+`");
        return Value::Int(r);
      }
      // Sizes are checked before anything is copied: an over-limit result
      // is never allocated.
      if (a.is_string() && b.is_string()) {
        CheckStringBytes(a.as_string().size() + b.as_string().size(), e->loc);
        Charge((a.as_string().size() + b.as_string().size()) / 16);
        return Value::String(a.as_string() + b.as_string());
      }
      if (a.is_list() && b.is_list()) {
        CheckValueNodes(sym::SaturatingAdd(a.TreeSize(), b.TreeSize()), e->loc);
        Charge(a.as_list().size() + b.as_list().size());
        std::vector<Value> items = a.as_list();
        items.insert(items.end(), b.as_list().begin(), b.as_list().end());
        return Value::List(std::move(items));
      }
      auto sa = a.scalar_sort(), sb = b.scalar_sort();
      if (sa && sb && *sa == *sb && *sa == sym::Sort::kInt) return Value::Sym(sym::MkAdd(a.ToTerm(), b.ToTerm()));
      if (sa && sb && *sa == *sb && *sa == sym::Sort::kString) return Value::Sym(sym::MkConcat(a.ToTerm(), b.ToTerm()));
      Fault(e->loc, absl::StrCat("`+` needs two ints, two strings or two lists, got ", Value::KindName(a.kind()),
                                 " and ", Value::KindName(b.kind())));
    }
    if (op == "-" || op == "*") {
      if (a.is_int() && b.is_int()) {
        int64_t r;
        bool overflow = op == "-" ? __builtin_sub_overflow(a.as_int(), b.as_int(), &r)
                                  : __builtin_mul_overflow(a.as_int(), b.as_int(), &r);
        if (overflow) Fault(e->loc, absl::StrCat("integer overflow in `", op, "`"));
        return Value::Int(r);
      }
      TermRef x = ScalarTerm(a, sym::Sort::kInt, e->loc, absl::StrCat("left operand of `", op, "`"));
      TermRef y = ScalarTerm(b, sym::Sort::kInt, e->loc, absl::StrCat("right operand of `", op, "`"));
      return Value::Sym(op == "-" ? sym::MkSub(x, y) : sym::MkMul(x, y));
    }
    // "/" and "%": concrete only.
    int64_t x = ConcreteInt(a, e->loc, absl::StrCat("left operand of `", op, "`"));
    int64_t y = ConcreteInt(b, e->loc, absl::StrCat("right operand of `", op, "`"));
    if (y == 0) Fault(e->loc, "division by zero");
    if (x == INT64_MIN && y == -1) {  // traps in hardware; the remainder is 0
      if (op == "%") return Value::Int(0);
      Fault(e->loc, "integer overflow in `/`");
    }
    return Value::Int(op == "/" ? x / y : x % y);
  }

  Value Call(const Expr* e) {
    std::vector<Value> args;
    args.reserve(e->args.size());
    for (const auto& a : e->args) args.push_back(E(a.get()));
    if (e->op_index >= 0) return CallOp(e, args);
    if (e->fn_index >= 0) {
      const FnDecl& f = spec_->ast.fns[static_cast<size_t>(e->fn_index)];
      DepthGuard call(&depth_);
      if (depth_ > kMaxCallDepth)
        Fault(e->loc, absl::StrCat("call depth exceeds ", kMaxCallDepth, " (runaway recursion in '", f.name,
                                   "'?; limit: call depth)"));
      std::vector<Value> frame(static_cast<size_t>(f.num_slots));
      for (size_t i = 0; i < args.size(); ++i) frame[i] = std::move(args[i]);
      std::vector<Value>* saved = frame_;
      frame_ = &frame;
      Value r = E(f.body.get());
      frame_ = saved;
      return r;
    }
    return CallBuiltin(e, args);
  }

  // A law's call of the library (the checks allow op calls in laws only).
  Value CallOp(const Expr* e, std::vector<Value>& args) {
    const OpDecl& op = spec_->ast.ops[static_cast<size_t>(e->op_index)];
    if (op_calls_ == nullptr) Fault(e->loc, absl::StrCat("'", op.name, "' calls the library, which is not here"));
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsConcrete()) Fault(e->loc, absl::StrCat("an argument of '", op.name, "' is symbolic"));
      if (!OfSignatureType(*spec_, op.params[i], args[i]))
        Fault(e->loc, absl::StrCat("argument ", i + 1, " of '", op.name, "' must be ",
                                   SignatureTypeText(*spec_, op.params[i]), ", got ", Show(args[i])));
    }
    OpAnswer answer = op_calls_->Call(op, args);
    if (answer.kind == OpAnswer::Kind::kReturned) return std::move(answer.value);
    throw OpCallEnded{std::move(answer), op.name};
  }

  Value CallBuiltin(const Expr* e, std::vector<Value>& a) {
    Loc loc = e->loc;
    auto str = [&](size_t i) {
      return ScalarTerm(a[i], sym::Sort::kString, loc, absl::StrCat("argument ", i + 1, " of ", e->name));
    };
    auto integer = [&](size_t i) {
      return ScalarTerm(a[i], sym::Sort::kInt, loc, absl::StrCat("argument ", i + 1, " of ", e->name));
    };
    switch (e->builtin) {
      case Builtin::kLen:
        if (a[0].is_list()) return Value::Int(static_cast<int64_t>(a[0].as_list().size()));
        if (a[0].is_map()) return Value::Int(static_cast<int64_t>(a[0].as_map().size()));
        return Value::Sym(sym::MkLen(str(0)));
      case Builtin::kStartsWith:
        return Value::Sym(sym::MkPrefixOf(str(1), str(0)));
      case Builtin::kEndsWith:
        return Value::Sym(sym::MkSuffixOf(str(1), str(0)));
      case Builtin::kContains:
        if (a[0].is_list()) {
          TermRef acc = sym::MkBool(false);
          for (const auto& x : a[0].as_list()) acc = sym::MkOr(acc, Equal(x, a[1]).ToTerm());
          return Value::Sym(acc);
        }
        return Value::Sym(sym::MkContains(str(0), str(1)));
      case Builtin::kSubstr: {
        TermRef s = str(0), start = integer(1);
        TermRef len = a.size() > 2 ? integer(2) : sym::MkSub(sym::MkLen(s), start);
        return Value::Sym(sym::MkSubstr(s, start, len));
      }
      case Builtin::kStr:
        if (a[0].is_string()) return a[0];
        return Value::String(absl::StrCat(ConcreteInt(a[0], loc, "argument of str")));
      case Builtin::kToInt:
        return Value::Sym(sym::MkToInt(str(0)));
      case Builtin::kSplit: {
        const std::string& s = ConcreteString(a[0], loc, "argument 1 of split");
        const std::string& sep = ConcreteString(a[1], loc, "argument 2 of split");
        if (sep.empty()) Fault(loc, "split's separator must not be empty");
        Charge(s.size());
        std::vector<Value> parts;
        for (absl::string_view part : absl::StrSplit(s, sep)) parts.push_back(Value::String(std::string(part)));
        return Value::List(std::move(parts));
      }
      case Builtin::kTrim: {  // optional whitespace (RFC 9110 §5.6.3): spaces and tabs
        const std::string& s = ConcreteString(a[0], loc, "argument of trim");
        const size_t first = s.find_first_not_of(" \t");
        if (first == std::string::npos) return Value::String("");
        return Value::String(s.substr(first, s.find_last_not_of(" \t") - first + 1));
      }
      case Builtin::kHas:
        return Value::Bool(NeedMap(a[0], loc, "has").Find(ConcreteKey(a[1], loc)) != nullptr);
      case Builtin::kGet: {
        const Value* f = NeedMap(a[0], loc, "get").Find(ConcreteKey(a[1], loc));
        return f ? Value::Some(*f) : Value::None();
      }
      case Builtin::kSet:
        Charge(NeedMap(a[0], loc, "set").as_map().size());  // a persistent map copies its entries
        return a[0].Set(ConcreteKey(a[1], loc), a[2]);
      case Builtin::kRemove:
        Charge(NeedMap(a[0], loc, "remove").as_map().size());
        return a[0].Remove(ConcreteKey(a[1], loc));
      case Builtin::kKeys: {
        std::vector<Value> ks;
        Charge(NeedMap(a[0], loc, "keys").as_map().size());
        for (const auto& [k, v] : a[0].as_map()) ks.push_back(Value::String(k));
        return Value::List(std::move(ks));
      }
      case Builtin::kValues: {
        std::vector<Value> vs;
        Charge(NeedMap(a[0], loc, "values").as_map().size());
        for (const auto& [k, v] : a[0].as_map()) vs.push_back(v);
        return Value::List(std::move(vs));
      }
      case Builtin::kPush: {
        if (!a[0].is_list()) TypeFault(loc, "push needs a list", a[0]);
        Charge(a[0].as_list().size());
        std::vector<Value> items = a[0].as_list();
        items.push_back(a[1]);
        return Value::List(std::move(items));
      }
      case Builtin::kDrop: {
        if (!a[0].is_list()) TypeFault(loc, "drop needs a list", a[0]);
        const std::vector<Value>& l = a[0].as_list();
        int64_t n =
            std::clamp<int64_t>(ConcreteInt(a[1], loc, "argument 2 of drop"), 0, static_cast<int64_t>(l.size()));
        Charge(l.size() - static_cast<size_t>(n));
        return Value::List(std::vector<Value>(l.begin() + n, l.end()));
      }
      case Builtin::kIsSome:
      case Builtin::kIsNone:
        if (!a[0].is_option()) TypeFault(loc, absl::StrCat(e->name, " needs an option"), a[0]);
        return Value::Bool(a[0].has_value() == (e->builtin == Builtin::kIsSome));
      case Builtin::kOrElse:
        if (!a[0].is_option()) TypeFault(loc, "or_else needs an option", a[0]);
        return a[0].has_value() ? a[0].inner() : a[1];
      case Builtin::kNodeOf: {
        const int64_t conn = ConcreteInt(a[0], loc, "node_of's connection");
        const int64_t trace_conn = !cluster_.connection_of || conn < 0 ? conn : cluster_.connection_of(conn);
        if (trace_conn < 0) Fault(loc, absl::StrCat("node_of(", conn, "): not a connection"));
        return Value::Int(cluster_.nodes.NodeOf(trace_conn));
      }
      case Builtin::kNodes:
        return Value::Int(cluster_.nodes.nodes);
      case Builtin::kOrigins: {
        std::vector<Value> names;
        for (int k = 0; k < cluster_.nodes.origins; ++k) names.push_back(Value::String(OriginEndpointName(k)));
        return Value::List(std::move(names));
      }
      case Builtin::kOrigin:  // the checks allow it only in `send origin(T)`, which Send evaluates
        Fault(loc, "`origin(T)` is only the connection of `send`");
      default:
        break;
    }
    if (gen_ == nullptr) Fault(loc, absl::StrCat("'", e->name, "' only runs in the tester's `gen` blocks"));
    switch (e->builtin) {
      case Builtin::kPick: {
        if (!a[0].is_list()) TypeFault(loc, "pick needs a list", a[0]);
        const auto& l = a[0].as_list();
        if (l.empty()) throw GenNoChoice{loc, "pick() from an empty list"};
        return l[static_cast<size_t>(gen_->RandomInt(0, static_cast<int64_t>(l.size()) - 1))];
      }
      case Builtin::kRandomWord: {
        if (a[0].is_sym())
          if (auto w = gen_->SymbolicWord(a[0])) return *std::move(w);
        int64_t n = ConcreteInt(a[0], loc, "random_word length");
        if (n < 0 || n > 1'000'000) Fault(loc, "random_word length must be between 0 and 1000000");
        if (auto w = gen_->SymbolicWord(Value::Int(n))) return *std::move(w);
        return Value::String(gen_->RandomWord(n));
      }
      case Builtin::kRandomEtag:
        return Value::String(gen_->RandomEtag());
      case Builtin::kIsConcrete:
        return Value::Bool(a[0].IsConcrete());
      case Builtin::kRandomInt: {
        int64_t lo = ConcreteInt(a[0], loc, "random_int low"), hi = ConcreteInt(a[1], loc, "random_int high");
        if (lo > hi) Fault(loc, absl::StrCat("random_int(", lo, ", ", hi, "): low exceeds high"));
        if (auto v = gen_->SymbolicInt(lo, hi)) return *std::move(v);
        return Value::Int(gen_->RandomInt(lo, hi));
      }
      case Builtin::kObserved: {
        if (!a[0].is_string()) TypeFault(loc, "observed needs a path string", a[0]);
        auto hole = gen_->Observed(a[0].as_string());
        if (!hole) throw GenNoChoice{loc, absl::StrCat("no message observed yet has ", a[0].as_string())};
        return *hole;
      }
      default:
        Fault(loc, absl::StrCat("internal error: builtin '", e->name, "'"));
    }
  }

  const Spec* spec_;
  const Interpreter::Cluster& cluster_;
  std::vector<Value>* globals_;
  Oracle* oracle_;
  StepOutput* out_;
  std::vector<int32_t>* branches_;  // where taken branches go; null: not recorded
  std::vector<Value>* frame_ = nullptr;
  GenContext* gen_ = nullptr;
  OpCalls* op_calls_ = nullptr;
  uintptr_t stack_base_;                  // the stack pointer when the evaluation began
  size_t stack_budget_;                   // bytes below stack_base_ the evaluation may use
  int depth_ = 0;                         // function calls in progress
  uint64_t steps_ = 0;                    // E() calls and Charge()d work so far
  uint64_t next_poll_ = kPollEverySteps;  // steps_ at which to ask oracle_->Poll()
  Loc current_loc_;                       // of the expression E() last began
};

class NoChoiceOracle : public Oracle {
 public:
  int Choose(int, Loc) override { return 0; }
  Value Fresh(sym::Sort, Loc) override { return Value::Null(); }
  bool Decide(const TermRef&, Loc) override { return false; }
  bool Assume(const TermRef&, Loc) override { return false; }
  bool Possible(const TermRef&) override { return true; }
};

// A gen block's oracle: as NoChoiceOracle, and each symbolic branch's
// (false) outcome is told to the gen context, so that concolic values
// solved later keep to the arm the block took.
class GenOracle : public NoChoiceOracle {
 public:
  explicit GenOracle(GenContext* ctx) : ctx_(ctx) {}
  bool Decide(const TermRef& cond, Loc) override {
    ctx_->Constrain(sym::MkNot(cond));
    return false;
  }

 private:
  GenContext* ctx_;
};

// How an evaluation run under Guarded ended without an error.
enum class EvalEnd { kDone, kPathKilled };

// Runs `eval` (which may throw the evaluator's exceptions: they never leave
// this file) and says how it ended: a spec fault or a gen alternative that
// could not choose is an error of `fault_code` located in `file`; a
// stopped oracle's status is returned as it is; a killed path (a failed
// `assume`) is kPathKilled, for the caller to judge.
template <typename Fn>
absl::StatusOr<EvalEnd> Guarded(const std::string& file, absl::StatusCode fault_code, Fn&& eval) {
  try {
    eval();
    return EvalEnd::kDone;
  } catch (const SpecFault& f) {
    return absl::Status(fault_code, FormatDiag(file, f.loc, f.msg));
  } catch (const GenNoChoice& n) {
    return absl::Status(fault_code, FormatDiag(file, n.loc, n.why));
  } catch (const PathKilled&) {
    return EvalEnd::kPathKilled;
  } catch (Stopped& stop) {
    return std::move(stop.status);
  }
}

}  // namespace

namespace {

// Runs a server handler's body from `globals` with `args` in its first
// local slots (RunHandler, RunFaultHandler).
absl::Status RunServerBody(const Spec* spec, const Interpreter::Cluster& cluster, const Expr* body, int num_slots,
                           std::initializer_list<Value> args, const std::vector<Value>& globals, Oracle* oracle,
                           StepOutput* out) {
  out->globals = globals;
  out->sends.clear();
  out->killed = false;
  if (out->branches != nullptr) out->branches->clear();
  std::vector<Value> frame(std::max(static_cast<size_t>(num_slots), args.size()));
  std::copy(args.begin(), args.end(), frame.begin());
  Eval ev(spec, &out->globals, oracle, out, cluster);
  absl::StatusOr<EvalEnd> end =
      Guarded(spec->file, absl::StatusCode::kFailedPrecondition, [&] { ev.Run(body, &frame); });
  if (!end.ok()) return end.status();
  out->killed = *end == EvalEnd::kPathKilled;
  return absl::OkStatus();
}

}  // namespace

std::string OriginEndpointName(int k) { return absl::StrCat("origin-", k); }

absl::Status Interpreter::RunHandler(const std::vector<Value>& globals, const Value& request, const Value& conn,
                                     Oracle* oracle, StepOutput* out) const {
  for (const Handler& h : spec_->ast.handlers)
    if (h.role == Role::kClient)
      return RunServerBody(spec_, cluster_, h.body.get(), h.num_slots, {request, conn}, globals, oracle, out);
  return absl::FailedPreconditionError("the spec has no client handler");  // the checks refuse such a spec
}

const Handler* Interpreter::OriginHandler() const {
  for (const Handler& h : spec_->ast.handlers)
    if (h.role == Role::kOrigin) return &h;
  return nullptr;
}

absl::Status Interpreter::RunOriginHandler(const std::vector<Value>& globals, const Value& answer, const Value& tag,
                                           Oracle* oracle, StepOutput* out) const {
  const Handler* h = OriginHandler();
  if (h == nullptr) return absl::FailedPreconditionError("the spec has no origin handler");
  return RunServerBody(spec_, cluster_, h->body.get(), h->num_slots, {answer, tag}, globals, oracle, out);
}

absl::Status Interpreter::RunFaultHandler(const std::vector<Value>& globals, const Value& fault, Oracle* oracle,
                                          StepOutput* out) const {
  const FaultHandler& h = spec_->ast.fault_handlers.at(0);
  return RunServerBody(spec_, cluster_, h.body.get(), h.num_slots, {fault}, globals, oracle, out);
}

absl::StatusOr<Value> Interpreter::RunGen(const std::string& name, const std::vector<Value>& globals, GenContext* ctx,
                                          const Value* request) const {
  const GenDecl* g = nullptr;
  for (const auto& d : spec_->ast.gens)
    if (d.name == name) g = &d;
  if (g == nullptr) return absl::NotFoundError(absl::StrCat("spec '", spec_->name, "' has no `gen ", name, "` block"));
  if ((g->role == Role::kOrigin) != (request != nullptr))
    return absl::FailedPreconditionError(absl::StrCat("`gen ", name, "` is ",
                                                      g->role == Role::kOrigin
                                                          ? "an origin generator: it answers a request"
                                                          : "a client generator: it answers no request"));
  std::vector<Value> copy = globals;
  std::vector<Value> frame(static_cast<size_t>(std::max(g->num_slots, 1)));
  if (request != nullptr) frame[0] = *request;
  GenOracle oracle(ctx);
  Eval ev(spec_, &copy, &oracle, nullptr, cluster_);
  ev.set_gen(ctx);
  std::vector<int32_t> taken;
  ev.set_branches(&taken);
  Value result;
  absl::StatusOr<EvalEnd> end = Guarded(spec_->file, absl::StatusCode::kFailedPrecondition, [&] {
    try {
      result = ev.Run(g->body.get(), &frame);
    } catch (GenNoChoice& n) {  // name the gen block
      n.why = absl::StrCat("`gen ", name, "` produced nothing: ", n.why);
      throw;
    }
  });
  if (!end.ok()) return end.status();
  if (*end == EvalEnd::kPathKilled)
    return absl::FailedPreconditionError(FormatDiag(spec_->file, g->loc, "`gen` blocks may not `assume`"));
  ctx->TookBranches(taken);
  return result;
}

absl::StatusOr<Value> Interpreter::PartitionKey(const Value& request) const {
  const PartitionDecl& p = spec_->ast.partition;
  std::vector<Value> globals;  // unused: keys cannot read state
  std::vector<Value> frame(static_cast<size_t>(std::max(p.num_slots, 1)));
  frame[0] = request;
  NoChoiceOracle oracle;
  Eval ev(spec_, &globals, &oracle, nullptr, cluster_);
  Value key;
  absl::StatusOr<EvalEnd> end =
      Guarded(spec_->file, absl::StatusCode::kFailedPrecondition, [&] { key = ev.Run(p.key.get(), &frame); });
  if (!end.ok()) return end.status();
  if (*end == EvalEnd::kPathKilled)
    return absl::FailedPreconditionError(FormatDiag(spec_->file, p.loc, "partition key may not `assume`"));
  return key;
}

namespace {

// A property's conditions are deterministic (checks.cc); a branch on a
// symbolic value makes the condition's truth unknown.
class PropertyOracle : public NoChoiceOracle {
 public:
  bool Decide(const TermRef&, Loc) override {
    symbolic = true;
    return false;
  }
  bool symbolic = false;
};

}  // namespace

absl::StatusOr<Interpreter::PropertyTruth> Interpreter::EvalPropertyCondition(const PropertyDecl& p, const Expr& atom,
                                                                              const Value& request,
                                                                              const Value& response,
                                                                              const Value& conn) const {
  std::vector<Value> globals;  // unused: conditions cannot read state
  std::vector<Value> frame(static_cast<size_t>(std::max(p.num_slots, 3)));
  frame[0] = request;
  frame[1] = response;
  frame[2] = conn;
  PropertyOracle oracle;
  Eval ev(spec_, &globals, &oracle, nullptr, cluster_);
  Value v;
  absl::StatusOr<EvalEnd> end =
      Guarded(spec_->file, absl::StatusCode::kFailedPrecondition, [&] { v = ev.Run(&atom, &frame); });
  if (!end.ok()) return end.status();
  if (*end == EvalEnd::kPathKilled)
    return absl::FailedPreconditionError(FormatDiag(spec_->file, atom.loc, "a property's condition may not `assume`"));
  if (oracle.symbolic || !v.IsConcrete()) return PropertyTruth::kUnknown;
  if (!v.is_bool())
    return absl::FailedPreconditionError(FormatDiag(
        spec_->file, atom.loc,
        absl::StrCat("property '", p.name, "': a condition must be a bool, got ", v.ToString().substr(0, 80))));
  return v.as_bool() ? PropertyTruth::kTrue : PropertyTruth::kFalse;
}

absl::StatusOr<LawOutcome> Interpreter::EvalLaw(const LawDecl& law, const std::vector<Value>& args,
                                                OpCalls* calls) const {
  std::vector<Value> globals;  // unused: laws cannot read state
  std::vector<Value> frame(std::max(static_cast<size_t>(law.num_slots), args.size()));
  std::copy(args.begin(), args.end(), frame.begin());
  NoChoiceOracle oracle;
  Eval ev(spec_, &globals, &oracle, nullptr, cluster_);
  ev.set_op_calls(calls);
  LawOutcome out;
  bool in_body = false;
  auto run = [&](const Expr* e, absl::string_view part) -> absl::StatusOr<bool> {
    Value v;
    absl::StatusOr<EvalEnd> end =
        Guarded(spec_->file, absl::StatusCode::kFailedPrecondition, [&] { v = ev.Run(e, &frame); });
    if (!end.ok()) return end.status();
    if (*end == EvalEnd::kPathKilled)
      return absl::FailedPreconditionError(FormatDiag(spec_->file, e->loc, "a property may not `assume`"));
    if (!v.is_bool())
      return absl::FailedPreconditionError(FormatDiag(
          spec_->file, e->loc,
          absl::StrCat("property '", law.name, "': its ", part, " must be a bool, got ", v.ToString().substr(0, 80))));
    return v.as_bool();
  };
  try {
    if (law.when != nullptr) {
      absl::StatusOr<bool> holds = run(law.when.get(), "`when` condition");
      if (!holds.ok()) return holds.status();
      if (!*holds) {
        out.kind = LawOutcome::Kind::kAborted;
        return out;
      }
    }
    in_body = true;
    absl::StatusOr<bool> holds = run(law.body.get(), "body");
    if (!holds.ok()) return holds.status();
    out.kind = *holds ? LawOutcome::Kind::kPassed : LawOutcome::Kind::kViolated;
    if (!*holds) out.message = "its body is false";
    return out;
  } catch (const OpCallEnded& ended) {
    switch (ended.answer.kind) {
      case OpAnswer::Kind::kPending:
        out.kind = LawOutcome::Kind::kPending;
        break;
      case OpAnswer::Kind::kDiverged:
        out.kind = LawOutcome::Kind::kDiverged;
        break;
      case OpAnswer::Kind::kIllTyped:
        // The library broke its signature: a bug wherever the law was.
        out.kind = LawOutcome::Kind::kViolated;
        out.message = absl::StrCat("'", ended.op, "' returned ", ended.answer.value.ToString().substr(0, 200),
                                   ", which is not what its signature says");
        break;
      case OpAnswer::Kind::kRaised:
      case OpAnswer::Kind::kReturned:  // cannot happen (CallOp returns it)
        // Raising in the condition: the values are outside the law's domain.
        out.kind = in_body ? LawOutcome::Kind::kViolated : LawOutcome::Kind::kAborted;
        out.message = absl::StrCat("'", ended.op, "' raised ", ended.answer.value.ToString().substr(0, 200));
        break;
    }
    return out;
  }
}

absl::StatusOr<std::vector<Value>> Interpreter::EvalInitialGlobals(const Spec& spec) {
  std::vector<Value> globals(spec.ast.vars.size());
  NoChoiceOracle oracle;
  const Cluster one_server;  // initial values are the same on every node
  Eval ev(&spec, &globals, &oracle, nullptr, one_server);
  for (size_t i = 0; i < spec.ast.vars.size(); ++i) {
    std::vector<Value> frame(static_cast<size_t>(spec.ast.vars[i].num_slots));
    absl::StatusOr<EvalEnd> end = Guarded(spec.file, absl::StatusCode::kInvalidArgument,
                                          [&] { globals[i] = ev.Run(spec.ast.vars[i].init.get(), &frame); });
    if (!end.ok()) return end.status();
    if (*end == EvalEnd::kPathKilled)
      return absl::InvalidArgumentError(FormatDiag(spec.file, spec.ast.vars[i].loc, "initial value may not `assume`"));
  }
  return globals;
}

}  // namespace dualswarm::lang
