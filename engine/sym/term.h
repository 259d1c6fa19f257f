// Symbolic terms: the expressions the spec builds when an operation touches
// a `fresh` value. Terms are immutable DAGs shared by pointer. The smart
// constructors fold constants, so a term whose operands are all concrete is
// always a constant node; substitution of bound variables re-folds.
#ifndef DUALSWARM_ENGINE_SYM_TERM_H_
#define DUALSWARM_ENGINE_SYM_TERM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace dualswarm::sym {

enum class Sort : uint8_t { kBool, kInt, kString };
const char* SortName(Sort s);

enum class TermOp : uint8_t {
  kVar,
  kConstBool,
  kConstInt,
  kConstString,
  kEq,
  kNot,
  kAnd,
  kOr,
  kAdd,
  kSub,
  kMul,
  kLt,
  kLe,
  kConcat,
  kLen,
  kPrefixOf,  // PrefixOf(p, s): p is a prefix of s
  kSuffixOf,  // SuffixOf(p, s)
  kContains,  // Contains(s, p)
  kSubstr,    // Substr(s, start, len)
  kToInt,     // ToInt(s): the decimal number s spells, -1 unless s is 1+ digits (SMT-LIB str.to_int)
  kIte,
};

struct TermNode;
using TermRef = std::shared_ptr<const TermNode>;

struct TermNode {
  TermOp op;
  Sort sort;
  int64_t ival = 0;  // kConstInt / kConstBool (0/1) / kVar: variable id
  std::string sval;  // kConstString / kVar: human-readable origin
  std::vector<TermRef> args;
  uint64_t hash = 0;
  // The term's size as a tree (shared subterms counted every time they
  // occur; saturates at kSaturatedSize) and depth (1 for a leaf), so walks
  // over it can be bounded before they start.
  uint64_t tree_size = 1;
  uint32_t depth = 1;
  bool has_var = false;  // a variable occurs in it

  bool IsConst() const { return op == TermOp::kConstBool || op == TermOp::kConstInt || op == TermOp::kConstString; }
};

// Tree sizes saturate here (no overflow however large a DAG describes).
inline constexpr uint64_t kSaturatedSize = uint64_t{1} << 62;
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a >= kSaturatedSize - b ? kSaturatedSize : a + b; }

// Constructors. All fold constants; none throw. Sort errors are the caller's
// job (the interpreter checks sorts before building).
TermRef MkVar(Sort sort, int64_t id, std::string origin);

// Variable ids from kStepVarBase up name the step that minted the variable:
// the k-th `fresh` of the step that took request n of the clients' side (or
// of the origin's), whichever explanation took it. The checker numbers
// variables so (check::PathOracle) to meet explanations that took the same
// steps in another order as equal. -1 when n or k is too large to encode
// (n >= 2^48, k >= 4096): the caller numbers such variables otherwise.
inline constexpr int64_t kStepVarBase = int64_t{1} << 62;
int64_t StepVarId(bool origin_side, int64_t n, int k);
// How an id reads in texts: "N", or for a step's variable "LABEL.K"
// ("oN.K" on the origin's side).
std::string VarIdText(int64_t id);
TermRef MkBool(bool b);
TermRef MkInt(int64_t i);
TermRef MkString(std::string s);
TermRef MkEq(TermRef a, TermRef b);
TermRef MkNot(TermRef a);
TermRef MkAnd(TermRef a, TermRef b);
TermRef MkOr(TermRef a, TermRef b);
TermRef MkAdd(TermRef a, TermRef b);
TermRef MkSub(TermRef a, TermRef b);
TermRef MkMul(TermRef a, TermRef b);
TermRef MkLt(TermRef a, TermRef b);
TermRef MkLe(TermRef a, TermRef b);
TermRef MkConcat(TermRef a, TermRef b);
TermRef MkLen(TermRef s);
TermRef MkPrefixOf(TermRef prefix, TermRef s);
TermRef MkSuffixOf(TermRef suffix, TermRef s);
TermRef MkContains(TermRef s, TermRef part);
TermRef MkSubstr(TermRef s, TermRef start, TermRef len);
// A constant folds to its value, saturating at INT64_MAX (so comparisons
// with smaller numbers keep their truth), or -1 when it is empty or has a
// character other than 0-9.
TermRef MkToInt(TermRef s);
TermRef MkIte(TermRef c, TermRef t, TermRef e);

bool TermEqual(const TermRef& a, const TermRef& b);
bool MentionsVar(const TermRef& t);
void CollectVars(const TermRef& t, std::vector<TermRef>* out);

// Variable bindings: variable id -> constant term.
using Bindings = std::unordered_map<int64_t, TermRef>;
TermRef Substitute(const TermRef& t, const Bindings& b);

// Renders a term in spec-like syntax, e.g. `len(etag#3) == 5`.
std::string TermToString(const TermRef& t);

}  // namespace dualswarm::sym

#endif  // DUALSWARM_ENGINE_SYM_TERM_H_
