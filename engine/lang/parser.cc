#include "engine/lang/parser.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/lang/lexer.h"
#include "engine/lang/limits.h"
#include "engine/lang/stack_budget.h"

namespace dualswarm::lang {
namespace {

// Thrown inside the parser only; Parse() catches it at item level.
struct SyntaxError {
  Loc loc;
  std::string msg;
};

bool IsKeyword(absl::string_view s) {
  static const char* kWords[] = {"spec", "use",   "var",   "fn",     "on",   "recv",  "from",   "gen",      "let",
                                 "if",   "else",  "match", "either", "or",   "fresh", "assume", "assert",   "send",
                                 "true", "false", "null",  "none",   "some", "oneof", "freq",   "partition"};
  for (const char* w : kWords)
    if (s == w) return true;
  return false;
}

// kMaxNesting (limits.h): every later pass (checks, interpreter,
// destructors) recurses over the tree, so a bound here keeps a hostile or
// generated spec from overflowing the stack.

class Parser {
 public:
  Parser(absl::string_view file, std::vector<Token> toks) : file_(file), t_(std::move(toks)) {}

  ParseResult Run() {
    ParseResult r;
    r.ast.file = std::string(file_);
    try {
      Expect("spec", "a spec starts with `spec NAME;`");
      r.ast.name = ExpectIdent("spec name");
      ExpectP(";");
    } catch (const SyntaxError& e) {
      r.errors.push_back(FormatDiag(file_, e.loc, e.msg));
      SkipToItem();
    }
    while (Peek().kind != Tok::kEof) {
      try {
        ParseItem(&r.ast);
      } catch (const SyntaxError& e) {
        r.errors.push_back(FormatDiag(file_, e.loc, e.msg));
        depth_ = 0;
        SkipToItem();
      }
    }
    return r;
  }

 private:
  const Token& Peek(int k = 0) const {
    size_t i = std::min(pos_ + k, t_.size() - 1);
    return t_[i];
  }
  const Token& Next() {
    const Token& t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool IsP(absl::string_view p, int k = 0) const { return Peek(k).kind == Tok::kPunct && Peek(k).text == p; }
  bool IsW(absl::string_view w, int k = 0) const { return Peek(k).kind == Tok::kIdent && Peek(k).text == w; }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEof:
        return "end of file";
      case Tok::kIdent:
        return absl::StrCat("'", t.text, "'");
      case Tok::kInt:
        return absl::StrCat("number ", t.ival);
      case Tok::kString:
        return "a string";
      case Tok::kPunct:
        return absl::StrCat("'", t.text, "'");
    }
    return "?";
  }
  [[noreturn]] void Fail(const Token& at, std::string msg) { throw SyntaxError{at.loc, std::move(msg)}; }
  // One more level of nesting at `at`; Fails beyond kMaxNesting, or
  // sooner on a thread whose stack would not hold kMaxNesting levels.
  void Deeper(const Token& at) {
    if (++depth_ > kMaxNesting)
      Fail(at, absl::StrCat("nested more than ", kMaxNesting, " levels deep (limit: nesting)"));
    auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (here < stack_base_ && stack_base_ - here > stack_budget_)
      Fail(at, absl::StrCat("nested ", depth_, " levels deep, more than this thread's stack holds (limit: nesting)"));
  }
  // Scoped Deeper() for recursive descent.
  struct Nest {
    Nest(Parser* p, const Token& at) : p(p) { p->Deeper(at); }
    ~Nest() { --p->depth_; }
    Parser* p;
  };
  void ExpectP(absl::string_view p) {
    if (!IsP(p)) Fail(Peek(), absl::StrCat("expected '", p, "', found ", Describe(Peek())));
    Next();
  }
  void Expect(absl::string_view w, absl::string_view hint) {
    if (!IsW(w)) Fail(Peek(), absl::StrCat(hint, "; found ", Describe(Peek())));
    Next();
  }
  std::string ExpectIdent(absl::string_view what) {
    const Token& t = Peek();
    if (t.kind != Tok::kIdent || IsKeyword(t.text)) Fail(t, absl::StrCat("expected ", what, ", found ", Describe(t)));
    Next();
    return t.text;
  }
  void SkipToItem() {
    int depth = 0;
    while (Peek().kind != Tok::kEof) {
      if (depth == 0 && pos_ > 0 &&
          (IsW("var") || IsW("fn") || IsW("on") || IsW("gen") || IsW("use") || IsW("partition") || IsW("property") ||
           IsW("type") || IsW("op")) &&
          (Peek().loc.col == 1 || IsP(";", -1) || IsP("}", -1)))
        return;
      if (IsP("{")) ++depth;
      if (IsP("}") && depth > 0) --depth;
      Next();
    }
  }

  void ParseItem(SpecAst* ast) {
    const Token& t = Peek();
    if (IsW("use")) {
      Next();
      Loc loc = Peek().loc;
      ast->uses.emplace_back(ExpectIdent("a schema name after `use`"), loc);
      ExpectP(";");
    } else if (IsW("var")) {
      Next();
      VarDecl v;
      v.loc = Peek().loc;
      v.name = ExpectIdent("a variable name");
      if (IsP(":")) {
        Next();
        v.has_type = true;
        v.type = ParseType();
      }
      if (!IsP("=")) Fail(Peek(), "a `var` needs an initial value: `var NAME = EXPR;`");
      Next();
      v.init = ParseExpr();
      ExpectP(";");
      ast->vars.push_back(std::move(v));
    } else if (IsW("fn")) {
      Next();
      FnDecl f;
      f.loc = Peek().loc;
      f.name = ExpectIdent("a function name");
      ExpectP("(");
      while (!IsP(")")) {
        f.params.push_back(ExpectIdent("a parameter name"));
        if (!IsP(")")) ExpectP(",");
      }
      Next();
      f.body = ParseBlock();
      ast->fns.push_back(std::move(f));
    } else if (IsW("on")) {
      Next();
      if (IsW("fault")) {
        Next();
        FaultHandler h;
        h.loc = t.loc;
        h.fault = ExpectIdent("the fault's name (`on fault F { ... }`)");
        h.body = ParseBlock();
        ast->fault_handlers.push_back(std::move(h));
        return;
      }
      Handler h;
      h.loc = t.loc;
      Expect("recv", "expected `recv` or `fault` after `on` (`on recv REQ from CONN { ... }`, `on fault F { ... }`)");
      h.request = ExpectIdent("the request name");
      Expect("from", "expected `from CONN` in `on recv REQ from CONN`");
      h.conn = ExpectIdent("the connection name");
      if (IsP(":")) {
        Next();
        h.role = ExpectRole();
      }
      h.body = ParseBlock();
      ast->handlers.push_back(std::move(h));
    } else if (IsW("partition")) {
      Next();
      if (ast->has_partition) Fail(t, "a spec has at most one `partition` declaration");
      ast->has_partition = true;
      ast->partition.loc = t.loc;
      ast->partition.request = ExpectIdent("the request name (`partition REQ => KEY;`)");
      ExpectP("=>");
      ast->partition.key = ParseExpr();
      ExpectP(";");
    } else if (IsW("gen")) {
      Next();
      GenDecl g;
      g.loc = Peek().loc;
      g.name = ExpectIdent("a generator name");
      if (IsP("(")) {
        Next();
        g.param = ExpectIdent("the request an origin generator answers (`gen NAME(REQ): origin { ... }`)");
        ExpectP(")");
      }
      if (IsP(":")) {
        Next();
        g.role = ExpectRole();
      }
      g.body = ParseBlock();
      ast->gens.push_back(std::move(g));
    } else if (IsW("type")) {
      Next();
      AbstractTypeDecl d;
      d.loc = Peek().loc;
      d.name = ExpectIdent("an abstract type's name (`type NAME;`)");
      ExpectP(";");
      ast->types.push_back(std::move(d));
    } else if (IsW("op")) {
      Next();
      OpDecl o;
      o.loc = Peek().loc;
      o.name = ExpectIdent("an operation's name (`op NAME(T1, T2) -> T;`)");
      ExpectP("(");
      while (!IsP(")")) {
        o.params.push_back(ExpectIdent("the type of an argument (`op NAME(T1, T2) -> T;`)"));
        if (!IsP(")")) ExpectP(",");
      }
      Next();
      if (IsP("-") && IsP(">", 1)) {
        Next();
        Next();
        o.result = ExpectIdent("the type of the result (`op NAME(T1, T2) -> T;`)");
      }
      ExpectP(";");
      ast->ops.push_back(std::move(o));
    } else if (IsW("property") && IsP("(", 2) &&
               ((Peek(3).kind == Tok::kIdent && IsP(":", 4)) || (IsP(")", 3) && (IsP("{", 4) || IsW("when", 4))))) {
      ParseLaw(ast);
    } else if (IsW("property")) {
      Next();
      PropertyDecl p;
      p.loc = t.loc;
      p.name = ExpectIdent("a property name (`property NAME(REQ, RESP, CONN) = FORMULA;`)");
      ExpectP("(");
      while (!IsP(")")) {
        p.params.push_back(ExpectIdent("a name for the event's request, response or connection"));
        if (!IsP(")")) ExpectP(",");
      }
      Next();
      if (p.params.empty() || p.params.size() > 3)
        Fail(t, "a property names 1 to 3 parts of an event: `property NAME(REQ, RESP, CONN) = FORMULA;`");
      ExpectP("=");
      p.formula = ParseFormula();
      ExpectP(";");
      ast->properties.push_back(std::move(p));
    } else {
      Fail(t, absl::StrCat("expected `use`, `var`, `fn`, `on recv`, `on fault`, `partition`, `gen`, `property`, "
                           "`type` or `op`, "
                           "found ",
                           Describe(t)));
    }
  }

  // `property NAME(x: T, ...) when P { BODY }`: a law of an interface.
  void ParseLaw(SpecAst* ast) {
    LawDecl l;
    l.loc = Peek().loc;
    Next();
    l.name = ExpectIdent("a property name (`property NAME(x: T, ...) when P { BODY }`)");
    ExpectP("(");
    while (!IsP(")")) {
      l.params.push_back(ExpectIdent("a parameter name (`x: T`)"));
      ExpectP(":");
      l.param_types.push_back(ExpectIdent("the parameter's type (`x: T`)"));
      if (!IsP(")")) ExpectP(",");
    }
    Next();
    if (IsW("when")) {
      Next();
      l.when = ParseExpr();
    }
    if (!IsP("{")) Fail(Peek(), absl::StrCat("expected the property's body `{ ... }`, found ", Describe(Peek())));
    l.body = ParseBlock();
    ast->laws.push_back(std::move(l));
  }

  // A property's formula. The temporal prefixes (always, next, eventually
  // within N) reach as far right as they can; then => (right-associative),
  // ||, &&, until, and ! binds tightest. Their words are keywords only here.
  std::unique_ptr<Formula> NewFormula(Formula::Kind k, Loc loc) {
    auto f = std::make_unique<Formula>();
    f->kind = k;
    f->loc = loc;
    return f;
  }
  std::unique_ptr<Formula> ParseFormula() {
    Nest nest(this, Peek());
    const Token& t = Peek();
    if (IsW("always") || IsW("next")) {
      Next();
      auto f = NewFormula(t.text == "always" ? Formula::Kind::kAlways : Formula::Kind::kNext, t.loc);
      f->left = ParseFormula();
      return f;
    }
    if (IsW("eventually")) {
      Next();
      Expect("within", "`eventually` needs a bound: `eventually within N F` (F at this event or one of the next N)");
      const Token& n = Peek();
      if (n.kind != Tok::kInt || n.ival < 0 || n.ival > kMaxEventuallyWithin)
        Fail(n, absl::StrCat("expected a number of events from 0 to ", kMaxEventuallyWithin, " after `within`"));
      Next();
      auto f = NewFormula(Formula::Kind::kEventually, t.loc);
      f->within = n.ival;
      f->left = ParseFormula();
      return f;
    }
    auto l = ParseFormulaOr();
    if (!IsP("=>")) return l;
    auto f = NewFormula(Formula::Kind::kImplies, Next().loc);
    f->left = std::move(l);
    f->right = ParseFormula();
    return f;
  }
  std::unique_ptr<Formula> ParseFormulaBinary(std::unique_ptr<Formula> (Parser::*sub)(), absl::string_view op,
                                              Formula::Kind kind, bool word) {
    auto l = (this->*sub)();
    int saved = depth_;
    while (word ? IsW(op) : IsP(op)) {
      Deeper(Peek());
      auto f = NewFormula(kind, Next().loc);
      f->left = std::move(l);
      f->right = IsW("always") || IsW("next") || IsW("eventually") ? ParseFormula() : (this->*sub)();
      l = std::move(f);
    }
    depth_ = saved;
    return l;
  }
  std::unique_ptr<Formula> ParseFormulaOr() {
    return ParseFormulaBinary(&Parser::ParseFormulaAnd, "||", Formula::Kind::kOr, false);
  }
  std::unique_ptr<Formula> ParseFormulaAnd() {
    return ParseFormulaBinary(&Parser::ParseFormulaUntil, "&&", Formula::Kind::kAnd, false);
  }
  std::unique_ptr<Formula> ParseFormulaUntil() {
    return ParseFormulaBinary(&Parser::ParseFormulaUnary, "until", Formula::Kind::kUntil, true);
  }
  std::unique_ptr<Formula> ParseFormulaUnary() {
    Nest nest(this, Peek());
    const Token& t = Peek();
    if (IsP("!")) {
      Next();
      auto f = NewFormula(Formula::Kind::kNot, t.loc);
      f->left = ParseFormulaUnary();
      return f;
    }
    if (IsW("always") || IsW("next") || IsW("eventually")) return ParseFormula();
    if (IsP("(")) {
      Next();
      auto f = ParseFormula();
      ExpectP(")");
      return f;
    }
    if (IsP("{")) {
      auto f = NewFormula(Formula::Kind::kAtom, t.loc);
      f->atom = ParseBlock();
      return f;
    }
    Fail(t, absl::StrCat("expected a condition `{ EXPR }`, `(`, `!`, `always`, `next` or `eventually` in a "
                         "property, found ",
                         Describe(t)));
  }

  // `client` or `origin`, after `:` in `on recv` and `gen`.
  Role ExpectRole() {
    const Token& t = Peek();
    if (IsW("client") || IsW("origin")) {
      Next();
      return t.text == "origin" ? Role::kOrigin : Role::kClient;
    }
    Fail(t, absl::StrCat("expected a role, `client` or `origin`, found ", Describe(t)));
  }

  TypeExpr ParseType() {
    Nest nest(this, Peek());
    TypeExpr ty;
    ty.loc = Peek().loc;
    if (IsP("{")) {
      Next();
      ty.name = "record";
      while (!IsP("}")) {
        ty.fields.push_back(ExpectIdent("a field name"));
        ExpectP(":");
        ty.params.push_back(ParseType());
        if (!IsP("}")) ExpectP(",");
      }
      Next();
      return ty;
    }
    if (IsW("null")) {  // a keyword, but also the name of the null type
      Next();
      ty.name = "null";
      return ty;
    }
    ty.name = ExpectIdent("a type");
    if (IsP("<")) {
      Next();
      while (true) {
        ty.params.push_back(ParseType());
        if (IsP(">")) break;
        ExpectP(",");
      }
      Next();
    }
    return ty;
  }

  ExprPtr NewExpr(ExprKind k, Loc loc) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->loc = loc;
    return e;
  }

  static bool IsBlockLike(const Expr& e) {
    return e.kind == ExprKind::kIf || e.kind == ExprKind::kMatch || e.kind == ExprKind::kEither ||
           e.kind == ExprKind::kBlock;
  }

  ExprPtr ParseBlock() {
    Nest nest(this, Peek());
    Loc loc = Peek().loc;
    ExpectP("{");
    auto b = NewExpr(ExprKind::kBlock, loc);
    while (!IsP("}")) {
      if (Peek().kind == Tok::kEof) Fail(Peek(), "unexpected end of file: missing '}'");
      Stmt s;
      s.loc = Peek().loc;
      if (IsW("let")) {
        Next();
        s.kind = Stmt::Kind::kLet;
        s.name = ExpectIdent("a name after `let`");
        ExpectP("=");
        s.value = ParseExpr();
        ExpectP(";");
      } else if (Peek().kind == Tok::kIdent && !IsKeyword(Peek().text) && IsP("=", 1)) {
        s.kind = Stmt::Kind::kAssign;
        s.name = Next().text;
        Next();
        s.value = ParseExpr();
        ExpectP(";");
      } else {
        s.kind = Stmt::Kind::kExpr;
        s.value = ParseExpr();
        if (IsP("}")) {
          b->tail = std::move(s.value);
          break;
        }
        if (IsP(";")) {
          Next();
        } else if (!IsBlockLike(*s.value)) {
          Fail(Peek(), absl::StrCat("expected ';' after expression, found ", Describe(Peek())));
        }
      }
      b->stmts.push_back(std::move(s));
    }
    ExpectP("}");
    return b;
  }

  ExprPtr ParseExpr() {
    Nest nest(this, Peek());
    return ParseOr();
  }

  ExprPtr ParseOr() {
    auto l = ParseAnd();
    int saved = depth_;
    while (IsP("||")) {
      Deeper(Peek());  // each operator makes the (left-leaning) tree deeper
      Loc loc = Next().loc;
      auto e = NewExpr(ExprKind::kOr, loc);
      e->args.push_back(std::move(l));
      e->args.push_back(ParseAnd());
      l = std::move(e);
    }
    depth_ = saved;
    return l;
  }
  ExprPtr ParseAnd() {
    auto l = ParseEq();
    int saved = depth_;
    while (IsP("&&")) {
      Deeper(Peek());
      Loc loc = Next().loc;
      auto e = NewExpr(ExprKind::kAnd, loc);
      e->args.push_back(std::move(l));
      e->args.push_back(ParseEq());
      l = std::move(e);
    }
    depth_ = saved;
    return l;
  }
  ExprPtr Binary(ExprPtr l, ExprPtr (Parser::*sub)(), std::initializer_list<const char*> ops) {
    int saved = depth_;
    while (true) {
      const char* found = nullptr;
      for (const char* op : ops)
        if (IsP(op)) found = op;
      if (!found) {
        depth_ = saved;
        return l;
      }
      Deeper(Peek());
      Loc loc = Next().loc;
      auto e = NewExpr(ExprKind::kBinary, loc);
      e->name = found;
      e->args.push_back(std::move(l));
      e->args.push_back((this->*sub)());
      l = std::move(e);
    }
  }
  ExprPtr ParseEq() { return Binary(ParseCmp(), &Parser::ParseCmp, {"==", "!="}); }
  ExprPtr ParseCmp() { return Binary(ParseAdd(), &Parser::ParseAdd, {"<", "<=", ">", ">="}); }
  ExprPtr ParseAdd() { return Binary(ParseMul(), &Parser::ParseMul, {"+", "-"}); }
  ExprPtr ParseMul() { return Binary(ParseUnary(), &Parser::ParseUnary, {"*", "/", "%"}); }
  ExprPtr ParseUnary() {
    if (IsP("!") || IsP("-")) {
      Nest nest(this, Peek());
      const Token& t = Next();
      auto e = NewExpr(ExprKind::kUnary, t.loc);
      e->name = t.text;
      e->args.push_back(ParseUnary());
      return e;
    }
    return ParsePostfix();
  }
  ExprPtr ParsePostfix() {
    auto e = ParsePrimary();
    int saved = depth_;
    while (true) {
      if (IsP(".") || IsP("[") || IsP("!")) Deeper(Peek());
      if (IsP(".")) {
        Loc loc = Next().loc;
        std::string name = ExpectIdent("a field or method name after '.'");
        if (IsP("(")) {
          auto c = NewExpr(ExprKind::kCall, loc);
          c->name = name;
          c->args.push_back(std::move(e));
          ParseArgs(&c->args);
          e = std::move(c);
        } else {
          auto f = NewExpr(ExprKind::kField, loc);
          f->name = name;
          f->args.push_back(std::move(e));
          e = std::move(f);
        }
      } else if (IsP("[")) {
        Loc loc = Next().loc;
        auto ix = NewExpr(ExprKind::kIndex, loc);
        ix->args.push_back(std::move(e));
        ix->args.push_back(ParseExpr());
        ExpectP("]");
        e = std::move(ix);
      } else if (IsP("!")) {
        Loc loc = Next().loc;
        auto u = NewExpr(ExprKind::kUnwrap, loc);
        u->args.push_back(std::move(e));
        e = std::move(u);
      } else {
        depth_ = saved;
        return e;
      }
    }
  }
  void ParseArgs(std::vector<ExprPtr>* out) {
    ExpectP("(");
    while (!IsP(")")) {
      out->push_back(ParseExpr());
      if (!IsP(")")) ExpectP(",");
    }
    Next();
  }
  ExprPtr Literal(Loc loc, ir::Value v) {
    auto e = NewExpr(ExprKind::kLiteral, loc);
    e->literal = std::move(v);
    return e;
  }
  bool RecordAhead() const {
    // After '{': a record if `}` or `key :` follows.
    if (IsP("}", 1)) return true;
    const Token& k = Peek(1);
    return (k.kind == Tok::kIdent || k.kind == Tok::kString) && IsP(":", 2);
  }

  ExprPtr ParsePrimary() {
    const Token& t = Peek();
    Loc loc = t.loc;
    switch (t.kind) {
      case Tok::kInt:
        Next();
        return Literal(loc, ir::Value::Int(t.ival));
      case Tok::kString:
        Next();
        return Literal(loc, ir::Value::String(t.text));
      case Tok::kEof:
        Fail(t, "unexpected end of file, expected an expression");
      case Tok::kPunct:
        break;
      case Tok::kIdent:
        return ParseWord();
    }
    if (IsP("(")) {
      Next();
      auto e = ParseExpr();
      ExpectP(")");
      return e;
    }
    if (IsP("[")) {
      Next();
      auto l = NewExpr(ExprKind::kList, loc);
      while (!IsP("]")) {
        l->args.push_back(ParseExpr());
        if (!IsP("]")) ExpectP(",");
      }
      Next();
      return l;
    }
    if (IsP("{")) {
      if (!RecordAhead()) return ParseBlock();
      Next();
      auto r = NewExpr(ExprKind::kRecord, loc);
      while (!IsP("}")) {
        const Token& k = Next();
        if (k.kind != Tok::kIdent && k.kind != Tok::kString)
          Fail(k, absl::StrCat("expected a field name, found ", Describe(k)));
        for (const auto& prev : r->keys)
          if (prev == k.text) Fail(k, absl::StrCat("duplicate field '", k.text, "' in record"));
        r->keys.push_back(k.text);
        ExpectP(":");
        r->args.push_back(ParseExpr());
        if (!IsP("}")) ExpectP(",");
      }
      Next();
      return r;
    }
    Fail(t, absl::StrCat("expected an expression, found ", Describe(t)));
  }

  ExprPtr ParseWord() {
    const Token& t = Next();
    Loc loc = t.loc;
    const std::string& w = t.text;
    if (w == "true") return Literal(loc, ir::Value::Bool(true));
    if (w == "false") return Literal(loc, ir::Value::Bool(false));
    if (w == "null") return Literal(loc, ir::Value::Null());
    if (w == "none") return Literal(loc, ir::Value::None());
    if (w == "some") {
      auto e = NewExpr(ExprKind::kSome, loc);
      ExpectP("(");
      e->args.push_back(ParseExpr());
      ExpectP(")");
      return e;
    }
    if (w == "fresh") {
      auto e = NewExpr(ExprKind::kFresh, loc);
      const Token& s = Peek();
      if (IsW("int"))
        e->fresh_sort = sym::Sort::kInt;
      else if (IsW("string"))
        e->fresh_sort = sym::Sort::kString;
      else if (IsW("bool"))
        e->fresh_sort = sym::Sort::kBool;
      else
        Fail(s, absl::StrCat("expected `int`, `string` or `bool` after `fresh`, found ", Describe(s)));
      Next();
      return e;
    }
    if (w == "if") {
      auto e = NewExpr(ExprKind::kIf, loc);
      e->args.push_back(ParseExpr());
      e->args.push_back(ParseBlock());
      if (IsW("else")) {
        Next();
        if (IsW("if")) {
          Nest nest(this, Peek());
          e->args.push_back(ParseWord());
        } else {
          e->args.push_back(ParseBlock());
        }
      } else {
        e->args.push_back(nullptr);
      }
      return e;
    }
    if (w == "match") {
      auto e = NewExpr(ExprKind::kMatch, loc);
      e->args.push_back(ParseExpr());
      ExpectP("{");
      while (!IsP("}")) {
        MatchArm arm;
        arm.pattern = ParsePattern();
        ExpectP("=>");
        arm.body = ParseExpr();
        e->arms.push_back(std::move(arm));
        if (!IsP("}")) {
          if (IsP(",")) {
            Next();
          } else if (!IsBlockLike(*e->arms.back().body)) {
            Fail(Peek(), absl::StrCat("expected ',' or '}' after match arm, found ", Describe(Peek())));
          }
        }
      }
      Next();
      if (e->arms.empty()) Fail(t, "a `match` needs at least one arm");
      return e;
    }
    if (w == "either") {
      auto e = NewExpr(ExprKind::kEither, loc);
      e->args.push_back(ParseBlock());
      if (!IsW("or")) Fail(Peek(), "`either { ... }` needs at least one `or { ... }`");
      while (IsW("or")) {
        Next();
        e->args.push_back(ParseBlock());
      }
      return e;
    }
    if (w == "oneof" || w == "freq") {
      bool freq = w == "freq";
      auto e = NewExpr(freq ? ExprKind::kFreq : ExprKind::kOneof, loc);
      ExpectP("{");
      while (!IsP("}")) {
        if (freq) {
          const Token& wt = Peek();
          if (wt.kind != Tok::kInt) Fail(wt, "expected a weight (`freq { 3: EXPR, ... }`)");
          Next();
          e->weights.push_back(wt.ival);
          ExpectP(":");
        }
        e->args.push_back(ParseExpr());
        if (!IsP("}")) ExpectP(",");
      }
      Next();
      if (e->args.empty()) Fail(t, absl::StrCat("`", w, "` needs at least one alternative"));
      return e;
    }
    if (w == "assume" || w == "assert") {
      auto e = NewExpr(w == "assume" ? ExprKind::kAssume : ExprKind::kAssert, loc);
      e->args.push_back(ParseExpr());
      return e;
    }
    if (w == "send") {
      auto e = NewExpr(ExprKind::kSend, loc);
      e->args.push_back(ParsePostfix());
      e->args.push_back(ParseExpr());
      return e;
    }
    if (IsKeyword(w)) Fail(t, absl::StrCat("unexpected keyword '", w, "'"));
    if (IsP("(")) {
      auto c = NewExpr(ExprKind::kCall, loc);
      c->name = w;
      ParseArgs(&c->args);
      return c;
    }
    auto n = NewExpr(ExprKind::kName, loc);
    n->name = w;
    return n;
  }

  Pattern ParsePattern() {
    Nest nest(this, Peek());
    Pattern p;
    const Token& t = Peek();
    p.loc = t.loc;
    if (IsP("_")) {
      Next();
      return p;
    }
    if (t.kind == Tok::kInt) {
      Next();
      p.kind = Pattern::Kind::kLiteral;
      p.literal = ir::Value::Int(t.ival);
      return p;
    }
    if (IsP("-") && Peek(1).kind == Tok::kInt) {
      Next();
      p.kind = Pattern::Kind::kLiteral;
      p.literal = ir::Value::Int(-Next().ival);
      return p;
    }
    if (t.kind == Tok::kString) {
      Next();
      p.kind = Pattern::Kind::kLiteral;
      p.literal = ir::Value::String(t.text);
      return p;
    }
    if (IsP("{")) {
      Next();
      p.kind = Pattern::Kind::kRecord;
      while (!IsP("}")) {
        const Token& k = Next();
        if (k.kind != Tok::kIdent && k.kind != Tok::kString)
          Fail(k, absl::StrCat("expected a field name in record pattern, found ", Describe(k)));
        p.keys.push_back(k.text);
        ExpectP(":");
        p.subs.push_back(ParsePattern());
        if (!IsP("}")) ExpectP(",");
      }
      Next();
      return p;
    }
    if (t.kind == Tok::kIdent) {
      Next();
      if (t.text == "none") {
        p.kind = Pattern::Kind::kNone;
      } else if (t.text == "some") {
        p.kind = Pattern::Kind::kSome;
        ExpectP("(");
        p.subs.push_back(ParsePattern());
        ExpectP(")");
      } else if (t.text == "true" || t.text == "false") {
        p.kind = Pattern::Kind::kLiteral;
        p.literal = ir::Value::Bool(t.text == "true");
      } else if (t.text == "null") {
        p.kind = Pattern::Kind::kLiteral;
        p.literal = ir::Value::Null();
      } else if (IsKeyword(t.text)) {
        Fail(t, absl::StrCat("unexpected keyword '", t.text, "' in pattern"));
      } else {
        p.kind = Pattern::Kind::kBind;
        p.name = t.text;
      }
      return p;
    }
    Fail(t, absl::StrCat("expected a pattern, found ", Describe(t)));
  }

  absl::string_view file_;
  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
  uintptr_t stack_base_ = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  size_t stack_budget_ = StackBudgetFrom(stack_base_, kMaxParseStackBytes);
};

}  // namespace

ParseResult Parse(absl::string_view file, absl::string_view src) {
  auto toks = Lex(file, src);
  if (!toks.ok()) {
    ParseResult r;
    r.ast.file = std::string(file);
    r.errors.push_back(std::string(toks.status().message()));
    return r;
  }
  return Parser(file, std::move(*toks)).Run();
}

}  // namespace dualswarm::lang
