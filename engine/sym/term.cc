#include "engine/sym/term.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::sym {

const char* SortName(Sort s) {
  switch (s) {
    case Sort::kBool:
      return "bool";
    case Sort::kInt:
      return "int";
    case Sort::kString:
      return "string";
  }
  return "?";
}

namespace {

TermRef Make(TermOp op, Sort sort, std::vector<TermRef> args, int64_t ival = 0, std::string sval = "") {
  auto n = std::make_shared<TermNode>();
  n->op = op;
  n->sort = sort;
  n->ival = ival;
  n->args = std::move(args);
  uint64_t h = absl::HashOf(static_cast<int>(op), static_cast<int>(sort), ival);
  if (op == TermOp::kConstString) h = absl::HashOf(h, sval);
  for (const auto& a : n->args) {
    h = absl::HashOf(h, a->hash);
    n->tree_size = SaturatingAdd(n->tree_size, a->tree_size);
    n->depth = std::max(n->depth, a->depth + 1);
    n->has_var |= a->has_var;
  }
  n->has_var |= op == TermOp::kVar;
  n->hash = h;
  n->sval = std::move(sval);
  return n;
}

bool IsTrue(const TermRef& t) { return t->op == TermOp::kConstBool && t->ival; }
bool IsFalse(const TermRef& t) { return t->op == TermOp::kConstBool && !t->ival; }

// Mirrors SMT-LIB str.substr so concrete folding agrees with Z3.
std::string SubstrSmt(const std::string& s, int64_t i, int64_t n) {
  int64_t l = static_cast<int64_t>(s.size());
  if (n <= 0 || i < 0 || i >= l) return "";
  return s.substr(static_cast<size_t>(i), static_cast<size_t>(std::min(n, l - i)));
}

}  // namespace

TermRef MkVar(Sort sort, int64_t id, std::string origin) { return Make(TermOp::kVar, sort, {}, id, std::move(origin)); }
TermRef MkBool(bool b) {
  static const TermRef kTrue = Make(TermOp::kConstBool, Sort::kBool, {}, 1);
  static const TermRef kFalse = Make(TermOp::kConstBool, Sort::kBool, {}, 0);
  return b ? kTrue : kFalse;
}
TermRef MkInt(int64_t i) { return Make(TermOp::kConstInt, Sort::kInt, {}, i); }
TermRef MkString(std::string s) { return Make(TermOp::kConstString, Sort::kString, {}, 0, std::move(s)); }

bool TermEqual(const TermRef& a, const TermRef& b) {
  if (a.get() == b.get()) return true;
  if (a->hash != b->hash || a->op != b->op || a->sort != b->sort || a->ival != b->ival ||
      a->args.size() != b->args.size())
    return false;
  if (a->op == TermOp::kConstString && a->sval != b->sval) return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!TermEqual(a->args[i], b->args[i])) return false;
  return true;
}

TermRef MkEq(TermRef a, TermRef b) {
  if (a->IsConst() && b->IsConst()) return MkBool(TermEqual(a, b));
  if (TermEqual(a, b)) return MkBool(true);
  // Canonical operand order: constants to the right, else by hash.
  if (a->IsConst() || (!b->IsConst() && a->hash > b->hash)) std::swap(a, b);
  if (a->sort == Sort::kBool && b->op == TermOp::kConstBool) return b->ival ? a : MkNot(a);
  // A concatenation with a constant end equals a constant only if that end
  // matches: `"W/" + x == "\"a\""` is false, `"W/" + x == "W/\"a\""` is
  // `x == "\"a\""`.
  if (a->op == TermOp::kConcat && b->op == TermOp::kConstString) {
    const std::string& whole = b->sval;
    if (a->args[0]->op == TermOp::kConstString) {
      const std::string& head = a->args[0]->sval;
      if (whole.compare(0, head.size(), head) != 0 || whole.size() < head.size()) return MkBool(false);
      return MkEq(a->args[1], MkString(whole.substr(head.size())));
    }
    if (a->args[1]->op == TermOp::kConstString) {
      const std::string& tail = a->args[1]->sval;
      if (whole.size() < tail.size() || whole.compare(whole.size() - tail.size(), tail.size(), tail) != 0)
        return MkBool(false);
      return MkEq(a->args[0], MkString(whole.substr(0, whole.size() - tail.size())));
    }
  }
  return Make(TermOp::kEq, Sort::kBool, {a, b});
}
TermRef MkNot(TermRef a) {
  if (a->op == TermOp::kConstBool) return MkBool(!a->ival);
  if (a->op == TermOp::kNot) return a->args[0];
  return Make(TermOp::kNot, Sort::kBool, {a});
}
TermRef MkAnd(TermRef a, TermRef b) {
  if (IsFalse(a) || IsFalse(b)) return MkBool(false);
  if (IsTrue(a)) return b;
  if (IsTrue(b)) return a;
  return Make(TermOp::kAnd, Sort::kBool, {a, b});
}
TermRef MkOr(TermRef a, TermRef b) {
  if (IsTrue(a) || IsTrue(b)) return MkBool(true);
  if (IsFalse(a)) return b;
  if (IsFalse(b)) return a;
  return Make(TermOp::kOr, Sort::kBool, {a, b});
}
// Integer constants fold only when the result fits in 64 bits; otherwise
// the node is kept and Z3 (unbounded integers) decides, so folding never
// disagrees with the solver by wrapping around.
TermRef MkAdd(TermRef a, TermRef b) {
  int64_t r;
  if (a->IsConst() && b->IsConst() && !__builtin_add_overflow(a->ival, b->ival, &r)) return MkInt(r);
  return Make(TermOp::kAdd, Sort::kInt, {a, b});
}
TermRef MkSub(TermRef a, TermRef b) {
  int64_t r;
  if (a->IsConst() && b->IsConst() && !__builtin_sub_overflow(a->ival, b->ival, &r)) return MkInt(r);
  return Make(TermOp::kSub, Sort::kInt, {a, b});
}
TermRef MkMul(TermRef a, TermRef b) {
  int64_t r;
  if (a->IsConst() && b->IsConst() && !__builtin_mul_overflow(a->ival, b->ival, &r)) return MkInt(r);
  return Make(TermOp::kMul, Sort::kInt, {a, b});
}
TermRef MkLt(TermRef a, TermRef b) {
  if (a->IsConst() && b->IsConst()) return MkBool(a->ival < b->ival);
  return Make(TermOp::kLt, Sort::kBool, {a, b});
}
TermRef MkLe(TermRef a, TermRef b) {
  if (a->IsConst() && b->IsConst()) return MkBool(a->ival <= b->ival);
  return Make(TermOp::kLe, Sort::kBool, {a, b});
}
TermRef MkConcat(TermRef a, TermRef b) {
  if (a->IsConst() && b->IsConst()) return MkString(a->sval + b->sval);
  if (a->op == TermOp::kConstString && a->sval.empty()) return b;
  if (b->op == TermOp::kConstString && b->sval.empty()) return a;
  return Make(TermOp::kConcat, Sort::kString, {a, b});
}
TermRef MkLen(TermRef s) {
  if (s->IsConst()) return MkInt(static_cast<int64_t>(s->sval.size()));
  return Make(TermOp::kLen, Sort::kInt, {s});
}
TermRef MkPrefixOf(TermRef p, TermRef s) {
  if (p->IsConst() && s->IsConst())
    return MkBool(s->sval.compare(0, p->sval.size(), p->sval) == 0 && s->sval.size() >= p->sval.size());
  if (p->IsConst() && p->sval.empty()) return MkBool(true);
  // A concatenation that starts with a constant: `starts_with("W/" + x,
  // "W/")` is true, `starts_with("W/" + x, "\"")` false, and a longer
  // prefix goes on to x.
  if (p->IsConst() && s->op == TermOp::kConcat && s->args[0]->op == TermOp::kConstString) {
    const std::string& head = s->args[0]->sval;
    const size_t common = std::min(head.size(), p->sval.size());
    if (head.compare(0, common, p->sval, 0, common) != 0) return MkBool(false);
    if (p->sval.size() <= head.size()) return MkBool(true);
    return MkPrefixOf(MkString(p->sval.substr(head.size())), s->args[1]);
  }
  return Make(TermOp::kPrefixOf, Sort::kBool, {p, s});
}
TermRef MkSuffixOf(TermRef p, TermRef s) {
  if (p->IsConst() && s->IsConst())
    return MkBool(s->sval.size() >= p->sval.size() &&
                  s->sval.compare(s->sval.size() - p->sval.size(), p->sval.size(), p->sval) == 0);
  if (p->IsConst() && p->sval.empty()) return MkBool(true);
  return Make(TermOp::kSuffixOf, Sort::kBool, {p, s});
}
TermRef MkContains(TermRef s, TermRef p) {
  if (p->IsConst() && s->IsConst()) return MkBool(s->sval.find(p->sval) != std::string::npos);
  if (p->IsConst() && p->sval.empty()) return MkBool(true);
  return Make(TermOp::kContains, Sort::kBool, {s, p});
}
TermRef MkSubstr(TermRef s, TermRef start, TermRef len) {
  if (s->IsConst() && start->IsConst() && len->IsConst()) return MkString(SubstrSmt(s->sval, start->ival, len->ival));
  return Make(TermOp::kSubstr, Sort::kString, {s, start, len});
}
TermRef MkToInt(TermRef s) {
  if (!s->IsConst()) return Make(TermOp::kToInt, Sort::kInt, {s});
  if (s->sval.empty()) return MkInt(-1);
  int64_t v = 0;
  for (char c : s->sval) {
    if (c < '0' || c > '9') return MkInt(-1);
    const int64_t d = c - '0';
    v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
  }
  return MkInt(v);
}
TermRef MkIte(TermRef c, TermRef t, TermRef e) {
  if (IsTrue(c)) return t;
  if (IsFalse(c)) return e;
  if (TermEqual(t, e)) return t;
  return Make(TermOp::kIte, t->sort, {c, t, e});
}

bool MentionsVar(const TermRef& t) { return t->has_var; }

void CollectVars(const TermRef& t, std::vector<TermRef>* out) {
  if (t->op == TermOp::kVar) {
    for (const auto& v : *out)
      if (v->ival == t->ival && v->sort == t->sort) return;
    out->push_back(t);
    return;
  }
  for (const auto& a : t->args)
    if (a->has_var) CollectVars(a, out);
}

TermRef Substitute(const TermRef& t, const Bindings& b) {
  if (t->op == TermOp::kVar) {
    auto it = b.find(t->ival);
    return it == b.end() ? t : it->second;
  }
  if (!t->has_var) return t;
  std::vector<TermRef> a;
  a.reserve(t->args.size());
  bool changed = false;
  for (const auto& x : t->args) {
    a.push_back(Substitute(x, b));
    changed |= a.back().get() != x.get();
  }
  if (!changed) return t;
  switch (t->op) {
    case TermOp::kEq:
      return MkEq(a[0], a[1]);
    case TermOp::kNot:
      return MkNot(a[0]);
    case TermOp::kAnd:
      return MkAnd(a[0], a[1]);
    case TermOp::kOr:
      return MkOr(a[0], a[1]);
    case TermOp::kAdd:
      return MkAdd(a[0], a[1]);
    case TermOp::kSub:
      return MkSub(a[0], a[1]);
    case TermOp::kMul:
      return MkMul(a[0], a[1]);
    case TermOp::kLt:
      return MkLt(a[0], a[1]);
    case TermOp::kLe:
      return MkLe(a[0], a[1]);
    case TermOp::kConcat:
      return MkConcat(a[0], a[1]);
    case TermOp::kLen:
      return MkLen(a[0]);
    case TermOp::kPrefixOf:
      return MkPrefixOf(a[0], a[1]);
    case TermOp::kSuffixOf:
      return MkSuffixOf(a[0], a[1]);
    case TermOp::kContains:
      return MkContains(a[0], a[1]);
    case TermOp::kSubstr:
      return MkSubstr(a[0], a[1], a[2]);
    case TermOp::kToInt:
      return MkToInt(a[0]);
    case TermOp::kIte:
      return MkIte(a[0], a[1], a[2]);
    default:
      return t;
  }
}

namespace {
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
std::string Bin(const TermRef& t, const char* op) {
  return absl::StrCat("(", TermToString(t->args[0]), " ", op, " ", TermToString(t->args[1]), ")");
}
}  // namespace

int64_t StepVarId(bool origin_side, int64_t n, int k) {
  constexpr int64_t kMaxN = int64_t{1} << 48;
  constexpr int kMaxK = 4096;
  if (n < 0 || n >= kMaxN || k < 0 || k >= kMaxK) return -1;
  return kStepVarBase + (origin_side ? int64_t{1} << 61 : 0) + n * kMaxK + k;
}

std::string VarIdText(int64_t id) {
  if (id < kStepVarBase) return absl::StrCat(id);
  const bool origin_side = (id - kStepVarBase) >> 61 != 0;
  const int64_t rest = (id - kStepVarBase) & ((int64_t{1} << 61) - 1);
  return absl::StrCat(origin_side ? "o" : "", rest / 4096, ".", rest % 4096);
}

std::string TermToString(const TermRef& t) {
  switch (t->op) {
    case TermOp::kVar:
      return absl::StrCat(t->sval.empty() ? "v" : t->sval, "#", VarIdText(t->ival));
    case TermOp::kConstBool:
      return t->ival ? "true" : "false";
    case TermOp::kConstInt:
      return absl::StrCat(t->ival);
    case TermOp::kConstString:
      return Quote(t->sval);
    case TermOp::kEq:
      return Bin(t, "==");
    case TermOp::kNot:
      if (t->args[0]->op == TermOp::kEq) return Bin(t->args[0], "!=");
      return absl::StrCat("!", TermToString(t->args[0]));
    case TermOp::kAnd:
      return Bin(t, "&&");
    case TermOp::kOr:
      return Bin(t, "||");
    case TermOp::kAdd:
      return t->sort == Sort::kString ? Bin(t, "+") : Bin(t, "+");
    case TermOp::kSub:
      return Bin(t, "-");
    case TermOp::kMul:
      return Bin(t, "*");
    case TermOp::kLt:
      return Bin(t, "<");
    case TermOp::kLe:
      return Bin(t, "<=");
    case TermOp::kConcat:
      return Bin(t, "+");
    case TermOp::kLen:
      return absl::StrCat("len(", TermToString(t->args[0]), ")");
    case TermOp::kPrefixOf:
      return absl::StrCat("starts_with(", TermToString(t->args[1]), ", ", TermToString(t->args[0]), ")");
    case TermOp::kSuffixOf:
      return absl::StrCat("ends_with(", TermToString(t->args[1]), ", ", TermToString(t->args[0]), ")");
    case TermOp::kContains:
      return absl::StrCat("contains(", TermToString(t->args[0]), ", ", TermToString(t->args[1]), ")");
    case TermOp::kSubstr:
      return absl::StrCat("substr(", TermToString(t->args[0]), ", ", TermToString(t->args[1]), ", ",
                          TermToString(t->args[2]), ")");
    case TermOp::kToInt:
      return absl::StrCat("to_int(", TermToString(t->args[0]), ")");
    case TermOp::kIte:
      return absl::StrCat("(if ", TermToString(t->args[0]), " then ", TermToString(t->args[1]), " else ",
                          TermToString(t->args[2]), ")");
  }
  return "?";
}

}  // namespace dualswarm::sym
