#include "engine/lang/checks.h"

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace dualswarm::lang {
namespace {

const BuiltinInfo kBuiltins[] = {
    {"len", Builtin::kLen, 1, 1, false},
    {"starts_with", Builtin::kStartsWith, 2, 2, false},
    {"ends_with", Builtin::kEndsWith, 2, 2, false},
    {"contains", Builtin::kContains, 2, 2, false},
    {"substr", Builtin::kSubstr, 2, 3, false},
    {"str", Builtin::kStr, 1, 1, false},
    {"to_int", Builtin::kToInt, 1, 1, false},
    {"split", Builtin::kSplit, 2, 2, false},
    {"trim", Builtin::kTrim, 1, 1, false},
    {"has", Builtin::kHas, 2, 2, false},
    {"get", Builtin::kGet, 2, 2, false},
    {"set", Builtin::kSet, 3, 3, false},
    {"remove", Builtin::kRemove, 2, 2, false},
    {"keys", Builtin::kKeys, 1, 1, false},
    {"values", Builtin::kValues, 1, 1, false},
    {"push", Builtin::kPush, 2, 2, false},
    {"drop", Builtin::kDrop, 2, 2, false},
    {"is_some", Builtin::kIsSome, 1, 1, false},
    {"is_none", Builtin::kIsNone, 1, 1, false},
    {"or_else", Builtin::kOrElse, 2, 2, false},
    {"node_of", Builtin::kNodeOf, 1, 1, false},
    {"nodes", Builtin::kNodes, 0, 0, false},
    {"origins", Builtin::kOrigins, 0, 0, false},
    {"origin", Builtin::kOrigin, 1, 1, false},
    {"is_concrete", Builtin::kIsConcrete, 1, 1, true},
    {"pick", Builtin::kPick, 1, 1, true},
    {"random_word", Builtin::kRandomWord, 1, 1, true},
    {"random_etag", Builtin::kRandomEtag, 0, 0, true},
    {"random_int", Builtin::kRandomInt, 2, 2, true},
    {"observed", Builtin::kObserved, 1, 1, true},
};

const char* kSchemas[] = {"http", "json", "resp", "memcached", "grpc", "fs"};

enum class Context { kVarInit, kFn, kHandler, kGen, kPartition, kProperty, kLaw };

class Checker {
 public:
  explicit Checker(SpecAst* ast) : ast_(ast) {}

  std::vector<std::string> Run() {
    for (const auto& [name, loc] : ast_->uses) {
      bool known = false;
      for (const char* s : kSchemas) known |= name == s;
      if (!known)
        Error(loc, absl::StrCat("unknown schema '", name, "' (known: http, json, resp, memcached, grpc, fs)"));
    }
    if (ast_->uses.size() > 1) Error(ast_->uses[1].second, "a spec uses at most one schema");
    for (size_t i = 0; i < ast_->fns.size(); ++i) {
      auto& f = ast_->fns[i];
      if (FindBuiltin(f.name)) Error(f.loc, absl::StrCat("function '", f.name, "' shadows a builtin"));
      if (!fns_.emplace(f.name, static_cast<int>(i)).second)
        Error(f.loc, absl::StrCat("function '", f.name, "' is defined twice"));
    }
    CheckSignature();
    for (size_t i = 0; i < ast_->vars.size(); ++i) {
      auto& v = ast_->vars[i];
      if (v.has_type) CheckType(v.type);
      // Initialisers may read earlier vars only.
      Begin(Context::kVarInit);
      Expr(v.init.get());
      v.num_slots = max_slots_;
      if (!globals_.emplace(v.name, static_cast<int>(i)).second)
        Error(v.loc, absl::StrCat("variable '", v.name, "' is declared twice"));
    }
    for (size_t fi = 0; fi < ast_->fns.size(); ++fi) {
      auto& f = ast_->fns[fi];
      current_fn_ = static_cast<int>(fi);
      Begin(Context::kFn);
      std::set<std::string> seen;
      for (const auto& p : f.params) {
        if (!seen.insert(p).second) Error(f.loc, absl::StrCat("parameter '", p, "' appears twice"));
        Declare(p);
      }
      Expr(f.body.get());
      f.num_slots = max_slots_;
    }
    CheckHandlerRoles();
    for (auto& h : ast_->handlers) {
      Begin(Context::kHandler);
      Declare(h.request);
      Declare(h.conn);
      Expr(h.body.get());
      h.num_slots = max_slots_;
    }
    if (ast_->fault_handlers.size() > 1)
      Error(ast_->fault_handlers[1].loc, "a spec has at most one `on fault` handler; branch on the fault inside it");
    for (auto& h : ast_->fault_handlers) {
      Begin(Context::kHandler);
      Declare(h.fault);
      Expr(h.body.get());
      h.num_slots = max_slots_;
    }
    if (ast_->has_partition) {
      Begin(Context::kPartition);
      Declare(ast_->partition.request);
      Expr(ast_->partition.key.get());
      ast_->partition.num_slots = max_slots_;
    }
    CheckProperties();
    CheckLaws();
    std::set<std::string> gen_names;
    for (auto& g : ast_->gens) {
      if (!gen_names.insert(g.name).second) Error(g.loc, absl::StrCat("generator '", g.name, "' is defined twice"));
      if (g.role == Role::kOrigin && g.param.empty())
        Error(g.loc, absl::StrCat("an origin generator answers a request: `gen ", g.name, "(REQ): origin { ... }`"));
      if (g.role == Role::kClient && !g.param.empty())
        Error(g.loc, absl::StrCat("only an origin generator takes the request it answers: `gen ", g.name, "(", g.param,
                                  "): origin { ... }`"));
      Begin(Context::kGen);
      if (!g.param.empty()) Declare(g.param);
      Expr(g.body.get());
      g.num_slots = max_slots_;
    }
    ReportGenOnlyReachableFromServer();
    ReportImpureCallsFromLaws();
    ReportOriginSendsWithoutOriginHandler();
    // An interface's generator chooses ops and laws at two sites more
    // (signature_gen.h), which feature masks may switch off too.
    ast_->num_choice_sites = sites_ + (ast_->ops.empty() ? 0 : 2);
    return std::move(errors_);
  }

 private:
  void Error(Loc loc, std::string msg) { errors_.push_back(FormatDiag(ast_->file, loc, msg)); }

  // Exactly one client handler; at most one origin handler, which a
  // partition cannot split yet (an origin request's key would have to be
  // its client request's).
  void CheckHandlerRoles() {
    const Handler* client = nullptr;
    const Handler* origin = nullptr;
    for (const Handler& h : ast_->handlers) {
      const Handler*& first = h.role == Role::kOrigin ? origin : client;
      if (first != nullptr)
        Error(h.loc, absl::StrCat("a spec has one `on recv` handler per role (this is a second ", RoleName(h.role),
                                  " handler); branch on the message inside it"));
      else
        first = &h;
    }
    // A library interface's spec needs no model: its laws judge the library.
    if (client == nullptr && ast_->ops.empty())
      Error({1, 1}, "the spec has no `on recv REQ from CONN { ... }` handler");
    if (origin != nullptr && ast_->has_partition)
      Error(ast_->partition.loc, "`partition` is not supported yet in a spec with an origin role");
  }

  // `send origin(T) ...` needs a handler for the origin's answers.
  void ReportOriginSendsWithoutOriginHandler() {
    for (const Handler& h : ast_->handlers)
      if (h.role == Role::kOrigin) return;
    for (const Loc& loc : origin_sends_)
      Error(loc,
            "`send origin(...)` needs a handler for the origin's answers: `on recv ANSWER from TAG: origin { ... }`");
  }

  void Begin(Context c) {
    ctx_ = c;
    scopes_.clear();
    scopes_.emplace_back();
    next_slot_ = 0;
    max_slots_ = 0;
  }
  int Declare(const std::string& name) {
    int s = next_slot_++;
    max_slots_ = std::max(max_slots_, next_slot_);
    scopes_.back()[name] = s;
    return s;
  }
  void Push() {
    scopes_.emplace_back();
    saved_.push_back(next_slot_);
  }
  void Pop() {
    scopes_.pop_back();
    next_slot_ = saved_.back();
    saved_.pop_back();
  }
  bool Lookup(const std::string& name, RefKind* ref, int* slot) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) {
        *ref = RefKind::kLocal;
        *slot = f->second;
        return true;
      }
    }
    auto g = globals_.find(name);
    if (g != globals_.end()) {
      *ref = RefKind::kGlobal;
      *slot = g->second;
      return true;
    }
    return false;
  }

  void CheckType(const TypeExpr& t) {
    static const std::map<std::string, int> kArity = {{"int", 0},    {"string", 0}, {"bool", 0},
                                                      {"any", 0},    {"null", 0},   {"list", 1},
                                                      {"option", 1}, {"map", 2},    {"record", -1}};
    auto it = kArity.find(t.name);
    if (it == kArity.end()) {
      Error(t.loc, absl::StrCat("unknown type '", t.name,
                                "' (known: int, string, bool, any, list<T>, option<T>, map<K,V>, {f: T})"));
      return;
    }
    if (it->second >= 0 && static_cast<int>(t.params.size()) != it->second)
      Error(t.loc, absl::StrCat("type '", t.name, "' takes ", it->second, " parameter(s)"));
    if (t.name == "map" && t.params.size() == 2 && t.params[0].name != "string")
      Error(t.params[0].loc, "map keys must be strings");
    for (const auto& p : t.params) CheckType(p);
  }

  void Pattern(lang::Pattern* p) {
    switch (p->kind) {
      case Pattern::Kind::kBind:
        p->slot = Declare(p->name);
        break;
      case Pattern::Kind::kSome:
      case Pattern::Kind::kRecord:
        for (auto& s : p->subs) Pattern(&s);
        break;
      default:
        break;
    }
  }

  void Expr(lang::Expr* e) {
    if (e == nullptr) return;
    switch (e->kind) {
      case ExprKind::kName: {
        if (ctx_ == Context::kPartition && Lookup(e->name, &e->ref, &e->slot) && e->ref == RefKind::kGlobal) {
          Error(e->loc, absl::StrCat("a partition key depends on the request only; '", e->name, "' is server state"));
          return;
        }
        if (ctx_ == Context::kLaw && Lookup(e->name, &e->ref, &e->slot) && e->ref == RefKind::kGlobal) {
          Error(e->loc, absl::StrCat("a property of an interface reads its parameters and what the library "
                                     "returns; '",
                                     e->name, "' is server state"));
          return;
        }
        if (ctx_ == Context::kProperty && Lookup(e->name, &e->ref, &e->slot) && e->ref == RefKind::kGlobal) {
          Error(e->loc, absl::StrCat("a property's conditions read the event only (its request, response and "
                                     "connection); '",
                                     e->name, "' is server state"));
          return;
        }
        if (ctx_ == Context::kFn && Lookup(e->name, &e->ref, &e->slot) && e->ref == RefKind::kGlobal)
          impure_fn_.insert(current_fn_);  // reads server state
        if (!Lookup(e->name, &e->ref, &e->slot)) {
          if (fns_.count(e->name) || FindBuiltin(e->name)) {
            Error(e->loc, absl::StrCat("'", e->name, "' is a function; call it with (...)"));
          } else {
            Error(e->loc, absl::StrCat("unknown name '", e->name, "'"));
          }
        }
        return;
      }
      case ExprKind::kBlock: {
        Push();
        for (auto& s : e->stmts) Stmt(&s);
        Expr(e->tail.get());
        Pop();
        return;
      }
      case ExprKind::kMatch: {
        Expr(e->args[0].get());
        for (auto& arm : e->arms) {
          Push();
          Pattern(&arm.pattern);
          Expr(arm.body.get());
          Pop();
        }
        return;
      }
      case ExprKind::kCall:
        Call(e);
        break;
      case ExprKind::kOneof:
      case ExprKind::kFreq:
        if (ctx_ != Context::kGen) {
          Error(e->loc, absl::StrCat("`", e->kind == ExprKind::kOneof ? "oneof" : "freq",
                                     "` is only allowed in `gen` blocks (use `either` in the server)"));
        }
        e->site = sites_++;
        for (size_t i = 0; i < e->weights.size(); ++i)
          if (e->weights[i] <= 0) Error(e->loc, "`freq` weights must be positive");
        break;
      case ExprKind::kSend:
        if (ctx_ == Context::kFn) impure_fn_.insert(current_fn_);
        if (ctx_ == Context::kGen || ctx_ == Context::kVarInit || ctx_ == Context::kPartition ||
            ctx_ == Context::kProperty || ctx_ == Context::kLaw)
          Error(e->loc, "`send` is only allowed in the server (handlers and functions)");
        if (lang::Expr* to = e->args[0].get(); to->kind == ExprKind::kCall && to->name == "origin") {
          // `send origin(T) MSG`: the one place origin(...) may stand.
          to->builtin = Builtin::kOrigin;
          if (to->args.size() != 1) Error(to->loc, "`origin` takes the tag of the request: `send origin(T) MSG`");
          origin_sends_.push_back(to->loc);
          for (auto& a : to->args) Expr(a.get());
          Expr(e->args[1].get());
          return;
        }
        break;
      case ExprKind::kAssume:
        if (ctx_ == Context::kFn) impure_fn_.insert(current_fn_);
        break;
      case ExprKind::kFresh:
      case ExprKind::kEither:
        if (ctx_ == Context::kFn) impure_fn_.insert(current_fn_);
        if (ctx_ == Context::kGen)
          Error(e->loc, "`gen` blocks choose with `oneof`/`freq`, not `fresh`/`either` (those are the server's)");
        if (ctx_ == Context::kVarInit || ctx_ == Context::kPartition || ctx_ == Context::kProperty ||
            ctx_ == Context::kLaw)
          Error(e->loc, "initial values, partition keys and properties must be deterministic (no `fresh`/`either`)");
        break;
      default:
        break;
    }
    for (auto& a : e->args) Expr(a.get());
  }

  // A function that (transitively) uses a tester builtin must not be
  // called by the server: report each such call from a handler.
  void ReportGenOnlyReachableFromServer() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const auto& [caller, callee] : fn_calls_)
        if (gen_only_fn_.count(callee) && !gen_only_fn_.count(caller)) {
          gen_only_fn_.insert(caller);
          changed = true;
        }
    }
    for (const auto& [callee, loc, name] : server_calls_)
      if (gen_only_fn_.count(callee))
        Error(loc, absl::StrCat("'", name,
                                "' uses tester functions (pick, observed, random_...), "
                                "so the server cannot call it"));
  }

  // A law may call a function only if it, and every function it calls,
  // reads and writes no server state and makes no choice (a law is judged
  // by running it again: it must compute the same each time).
  void ReportImpureCallsFromLaws() {
    for (int f : gen_only_fn_) impure_fn_.insert(f);
    bool changed = true;
    while (changed) {
      changed = false;
      for (const auto& [caller, callee] : fn_calls_)
        if (impure_fn_.count(callee) && !impure_fn_.count(caller)) {
          impure_fn_.insert(caller);
          changed = true;
        }
    }
    for (const auto& [callee, loc, name] : law_fn_calls_)
      if (impure_fn_.count(callee))
        Error(loc, absl::StrCat("a property of an interface may call only functions that read no server state and "
                                "make no choices; '",
                                name,
                                "' (or a function it calls) uses a `var`, `send`, `fresh`, `either`, "
                                "`assume` or a tester function"));
  }

  void Call(lang::Expr* e) {
    int argc = static_cast<int>(e->args.size());
    // In a law an op's name means the op (even one named like a builtin).
    if (auto op = ops_.find(e->name); op != ops_.end() && (ctx_ == Context::kLaw || !FindBuiltin(e->name))) {
      if (ctx_ != Context::kLaw) {
        Error(e->loc, absl::StrCat("'", e->name,
                                   "' is an operation of the library: only an interface's properties call it "
                                   "(`property NAME(x: T) { ... }`)"));
        return;
      }
      e->op_index = op->second;
      law_calls_op_ = true;
      int want = static_cast<int>(ast_->ops[op->second].params.size());
      if (want != argc) Error(e->loc, absl::StrCat("'", e->name, "' takes ", want, " argument(s), got ", argc));
      return;
    }
    auto f = fns_.find(e->name);
    if (f != fns_.end()) {
      e->fn_index = f->second;
      if (ctx_ == Context::kFn) fn_calls_.push_back({current_fn_, f->second});
      if (ctx_ == Context::kHandler) server_calls_.push_back({f->second, e->loc, e->name});
      int want = static_cast<int>(ast_->fns[f->second].params.size());
      if (want != argc) Error(e->loc, absl::StrCat("'", e->name, "' takes ", want, " argument(s), got ", argc));
      if (ctx_ == Context::kLaw) {
        law_fn_calls_.push_back({f->second, e->loc, e->name});  // must be pure: ReportImpureCallsFromLaws
        return;
      }
      if (ctx_ == Context::kVarInit || ctx_ == Context::kPartition || ctx_ == Context::kProperty)
        Error(e->loc, "initial values, partition keys and properties cannot call user functions");
      return;
    }
    const BuiltinInfo* b = FindBuiltin(e->name);
    if (b == nullptr) {
      Error(e->loc, absl::StrCat("unknown function '", e->name, "'"));
      return;
    }
    e->builtin = b->id;
    if (b->id == Builtin::kOrigin) {
      Error(e->loc, "`origin(T)` names the origin side only as the connection of `send`: `send origin(T) MSG`");
      return;
    }
    if (argc < b->min_args || argc > b->max_args) {
      if (b->min_args == b->max_args) {
        Error(e->loc, absl::StrCat("'", e->name, "' takes ", b->min_args, " argument(s), got ", argc));
      } else {
        Error(e->loc,
              absl::StrCat("'", e->name, "' takes ", b->min_args, " to ", b->max_args, " arguments, got ", argc));
      }
    }
    // Gen-only builtins may appear in functions (which gen may call); a
    // function that uses one fails at run time if the server calls it.
    if (b->gen_only && ctx_ == Context::kFn) gen_only_fn_.insert(current_fn_);
    if (b->gen_only && ctx_ != Context::kGen && ctx_ != Context::kFn)
      Error(e->loc, absl::StrCat("'", e->name, "' is a tester function, only allowed in `gen` blocks"));
  }

  // Each property: distinct names, and conditions that read only the event
  // (its parameters, in slots 0..2) and are deterministic.
  void CheckProperties() {
    std::set<std::string> names;
    for (auto& p : ast_->properties) {
      if (!names.insert(p.name).second) Error(p.loc, absl::StrCat("property '", p.name, "' is defined twice"));
      Begin(Context::kProperty);
      std::set<std::string> seen;
      for (const auto& param : p.params) {
        if (!seen.insert(param).second) Error(p.loc, absl::StrCat("parameter '", param, "' appears twice"));
        Declare(param);
      }
      FormulaAtoms(p.formula.get());
      p.num_slots = max_slots_;
    }
  }
  // A library interface's signature: distinct abstract types and ops, ops
  // that are neither functions nor builtins, and types that name an
  // abstract type, a client `gen` block or a base type drawn by default.
  void CheckSignature() {
    for (const auto& t : ast_->types) {
      if (IsBaseTypeName(t.name) || t.name == "ref" || t.name == "quote" || t.name == "else")
        Error(t.loc, absl::StrCat("'", t.name,
                                  "' cannot name an abstract type (a base type, or a word J-expressions "
                                  "use: ref, quote, else)"));
      if (!abstract_types_.insert(t.name).second) Error(t.loc, absl::StrCat("type '", t.name, "' is declared twice"));
    }
    for (size_t i = 0; i < ast_->ops.size(); ++i) {
      const OpDecl& o = ast_->ops[i];
      if (fns_.count(o.name)) Error(o.loc, absl::StrCat("operation '", o.name, "' has the name of a function"));
      if (!ops_.emplace(o.name, static_cast<int>(i)).second)
        Error(o.loc, absl::StrCat("operation '", o.name, "' is declared twice"));
      for (const auto& p : o.params) CheckSignatureType(p, o.loc);
      // A result is only kept or read, never drawn: any type will do.
      if (!o.result.empty() && !IsBaseTypeName(o.result)) CheckSignatureType(o.result, o.loc);
    }
  }
  static bool IsBaseTypeName(const std::string& n) {
    return n == "int" || n == "string" || n == "bool" || n == "any" || n == "list" || n == "map" || n == "option" ||
           n == "null" || n == "record";
  }
  void CheckSignatureType(const std::string& name, Loc loc) {
    if (abstract_types_.count(name) || name == "int" || name == "string" || name == "bool") return;
    for (const auto& g : ast_->gens)
      if (g.name == name && g.role == Role::kClient && g.param.empty()) return;
    Error(loc, absl::StrCat("unknown type '", name, "' in the signature: declare `type ", name,
                            ";` (an abstract type) or `gen ", name,
                            " { ... }` (how the tester draws its values); int, string and bool have default "
                            "generators"));
  }

  // Each law: a distinct name, parameter types of the signature, and
  // deterministic conditions over its parameters and the ops' results.
  void CheckLaws() {
    std::set<std::string> names;
    for (const auto& p : ast_->properties) names.insert(p.name);
    for (auto& l : ast_->laws) {
      if (!names.insert(l.name).second) Error(l.loc, absl::StrCat("property '", l.name, "' is defined twice"));
      Begin(Context::kLaw);
      std::set<std::string> seen;
      for (size_t i = 0; i < l.params.size(); ++i) {
        if (!seen.insert(l.params[i]).second) Error(l.loc, absl::StrCat("parameter '", l.params[i], "' appears twice"));
        Declare(l.params[i]);
        CheckSignatureType(l.param_types[i], l.loc);
      }
      law_calls_op_ = false;
      Expr(l.when.get());
      Expr(l.body.get());
      l.num_slots = max_slots_;
      // The checker judges a law by the library calls its runs make.
      if (!law_calls_op_)
        Error(l.loc, absl::StrCat("property '", l.name,
                                  "' calls no operation of the library, so it tests nothing the library does"));
    }
  }

  void FormulaAtoms(lang::Formula* f) {
    if (f == nullptr) return;
    if (f->kind == lang::Formula::Kind::kAtom) {
      Expr(f->atom.get());
      return;
    }
    FormulaAtoms(f->left.get());
    FormulaAtoms(f->right.get());
  }

  void Stmt(lang::Stmt* s) {
    switch (s->kind) {
      case Stmt::Kind::kLet:
        Expr(s->value.get());
        s->ref = RefKind::kLocal;
        s->slot = Declare(s->name);
        return;
      case Stmt::Kind::kAssign:
        Expr(s->value.get());
        if (!Lookup(s->name, &s->ref, &s->slot)) {
          Error(s->loc, absl::StrCat("assignment to unknown name '", s->name, "' (declare it with `let` or `var`)"));
        } else if (s->ref == RefKind::kGlobal && ctx_ == Context::kGen) {
          Error(s->loc, absl::StrCat("`gen` blocks read the model state but cannot assign '", s->name, "'"));
        } else if (s->ref == RefKind::kGlobal &&
                   (ctx_ == Context::kProperty || ctx_ == Context::kPartition || ctx_ == Context::kLaw)) {
          Error(s->loc,
                absl::StrCat("'", s->name, "' is server state: partition keys and properties cannot assign it"));
        } else if (s->ref == RefKind::kGlobal && ctx_ == Context::kFn) {
          impure_fn_.insert(current_fn_);
        }
        return;
      case Stmt::Kind::kExpr:
        Expr(s->value.get());
        return;
    }
  }

  SpecAst* ast_;
  Context ctx_ = Context::kFn;
  std::vector<std::map<std::string, int>> scopes_;
  std::vector<int> saved_;
  int next_slot_ = 0, max_slots_ = 0;
  std::map<std::string, int> globals_;
  std::map<std::string, int> fns_;
  std::map<std::string, int> ops_;        // the signature's operations
  std::set<std::string> abstract_types_;  // the signature's `type`s
  bool law_calls_op_ = false;             // the law being checked calls an op
  int sites_ = 0;
  int current_fn_ = -1;
  std::set<int> gen_only_fn_;                                    // functions using tester builtins
  std::vector<std::pair<int, int>> fn_calls_;                    // (caller, callee)
  std::vector<std::tuple<int, Loc, std::string>> server_calls_;  // handler -> function
  std::vector<std::tuple<int, Loc, std::string>> law_fn_calls_;  // law -> function
  std::set<int> impure_fn_;                                      // functions touching server state or choosing
  std::vector<Loc> origin_sends_;                                // `send origin(T) ...`
  std::vector<std::string> errors_;
};

}  // namespace

const BuiltinInfo* FindBuiltin(const std::string& name) {
  for (const auto& b : kBuiltins)
    if (name == b.name) return &b;
  return nullptr;
}

std::vector<std::string> CheckAndResolve(SpecAst* ast) { return Checker(ast).Run(); }

}  // namespace dualswarm::lang
