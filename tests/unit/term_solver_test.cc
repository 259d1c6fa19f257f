// Unit tests for engine/sym: constant folding in the smart constructors
// (MkSubstr must agree with SMT-LIB str.substr, also out of range), the
// canonical operand order of MkEq, Substitute, and the Solver (sat/unsat on
// string constraints, the concrete fast path, the result cache, agreement
// of concrete folding with Z3, the difference-logic fast path and the
// substitution of decided variables against Z3).
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine/sym/difference_logic.h"
#include "engine/sym/solver.h"
#include "engine/sym/term.h"
#include "gtest/gtest.h"
#include "z3++.h"

namespace dualswarm::sym {

// gtest prints results by name (found by ADL, so outside the anonymous namespace).
void PrintTo(Solver::Result r, std::ostream* os) {
  *os << (r == Solver::Result::kSat ? "sat" : r == Solver::Result::kUnsat ? "unsat" : "unknown");
}

namespace {

using R = Solver::Result;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TermRef SVar(int64_t id, const std::string& name = "s") { return MkVar(Sort::kString, id, name); }
TermRef IVar(int64_t id, const std::string& name = "n") { return MkVar(Sort::kInt, id, name); }
TermRef BVar(int64_t id, const std::string& name = "b") { return MkVar(Sort::kBool, id, name); }

void ExpectConstString(const TermRef& t, const std::string& want) {
  ASSERT_EQ(t->op, TermOp::kConstString) << TermToString(t);
  EXPECT_EQ(t->sval, want);
}
void ExpectConstInt(const TermRef& t, int64_t want) {
  ASSERT_EQ(t->op, TermOp::kConstInt) << TermToString(t);
  EXPECT_EQ(t->ival, want);
}
void ExpectConstBool(const TermRef& t, bool want) {
  ASSERT_EQ(t->op, TermOp::kConstBool) << TermToString(t);
  EXPECT_EQ(t->ival != 0, want) << TermToString(t);
}

// ---------------------------------------------------------------- folding

TEST(TermTest, ConstantsCarryTheirSort) {
  EXPECT_EQ(MkBool(true)->sort, Sort::kBool);
  EXPECT_EQ(MkInt(1)->sort, Sort::kInt);
  EXPECT_EQ(MkString("x")->sort, Sort::kString);
  EXPECT_TRUE(MkString("x")->IsConst());
  EXPECT_FALSE(SVar(1)->IsConst());
  EXPECT_STREQ(SortName(Sort::kString), "string");
}

TEST(TermTest, ArithmeticFolds) {
  ExpectConstInt(MkAdd(MkInt(2), MkInt(3)), 5);
  ExpectConstInt(MkSub(MkInt(2), MkInt(3)), -1);
  ExpectConstInt(MkMul(MkInt(-4), MkInt(3)), -12);
  ExpectConstBool(MkLt(MkInt(1), MkInt(2)), true);
  ExpectConstBool(MkLt(MkInt(2), MkInt(2)), false);
  ExpectConstBool(MkLe(MkInt(2), MkInt(2)), true);
  ExpectConstBool(MkLe(MkInt(3), MkInt(2)), false);
  EXPECT_EQ(MkAdd(IVar(1), MkInt(1))->op, TermOp::kAdd);
  EXPECT_EQ(MkLt(IVar(1), MkInt(1))->op, TermOp::kLt);
}

TEST(TermTest, BooleanFolds) {
  auto b = BVar(1);
  ExpectConstBool(MkNot(MkBool(true)), false);
  ExpectConstBool(MkAnd(MkBool(true), MkBool(true)), true);
  ExpectConstBool(MkAnd(b, MkBool(false)), false);
  ExpectConstBool(MkAnd(MkBool(false), b), false);
  EXPECT_TRUE(TermEqual(MkAnd(MkBool(true), b), b));
  EXPECT_TRUE(TermEqual(MkAnd(b, MkBool(true)), b));
  ExpectConstBool(MkOr(b, MkBool(true)), true);
  ExpectConstBool(MkOr(MkBool(true), b), true);
  EXPECT_TRUE(TermEqual(MkOr(MkBool(false), b), b));
  EXPECT_TRUE(TermEqual(MkOr(b, MkBool(false)), b));
  // Double negation cancels.
  EXPECT_EQ(MkNot(b)->op, TermOp::kNot);
  EXPECT_TRUE(TermEqual(MkNot(MkNot(b)), b));
}

TEST(TermTest, StringFolds) {
  ExpectConstString(MkConcat(MkString("ab"), MkString("cd")), "abcd");
  ExpectConstInt(MkLen(MkString("")), 0);
  ExpectConstInt(MkLen(MkString("hello")), 5);
  ExpectConstBool(MkPrefixOf(MkString("he"), MkString("hello")), true);
  ExpectConstBool(MkPrefixOf(MkString("hello"), MkString("he")), false);
  ExpectConstBool(MkPrefixOf(MkString("hex"), MkString("hello")), false);
  ExpectConstBool(MkPrefixOf(MkString(""), MkString("")), true);
  ExpectConstBool(MkSuffixOf(MkString("lo"), MkString("hello")), true);
  ExpectConstBool(MkSuffixOf(MkString("hello!"), MkString("hello")), false);
  ExpectConstBool(MkSuffixOf(MkString("he"), MkString("hello")), false);
  ExpectConstBool(MkContains(MkString("hello"), MkString("ell")), true);
  ExpectConstBool(MkContains(MkString("hello"), MkString("elo")), false);
  ExpectConstBool(MkContains(MkString(""), MkString("")), true);
}

TEST(TermTest, StringIdentitiesWithVariables) {
  auto s = SVar(1);
  // Empty-string identities need no solver.
  EXPECT_TRUE(TermEqual(MkConcat(MkString(""), s), s));
  EXPECT_TRUE(TermEqual(MkConcat(s, MkString("")), s));
  ExpectConstBool(MkPrefixOf(MkString(""), s), true);
  ExpectConstBool(MkSuffixOf(MkString(""), s), true);
  ExpectConstBool(MkContains(s, MkString("")), true);
  EXPECT_EQ(MkLen(s)->op, TermOp::kLen);
  EXPECT_EQ(MkLen(s)->sort, Sort::kInt);
  EXPECT_EQ(MkConcat(s, MkString("x"))->op, TermOp::kConcat);
}

TEST(TermTest, IteFolds) {
  auto x = IVar(1), y = IVar(2);
  EXPECT_TRUE(TermEqual(MkIte(MkBool(true), x, y), x));
  EXPECT_TRUE(TermEqual(MkIte(MkBool(false), x, y), y));
  EXPECT_TRUE(TermEqual(MkIte(BVar(3), x, x), x));
  auto ite = MkIte(BVar(3), x, y);
  EXPECT_EQ(ite->op, TermOp::kIte);
  EXPECT_EQ(ite->sort, Sort::kInt);
}

// SMT-LIB: str.substr(s, i, n) is "" when n <= 0, i < 0 or i >= |s|;
// otherwise the longest substring starting at i with length <= n.
TEST(TermTest, SubstrFoldsLikeSmtLib) {
  struct Case {
    const char* s;
    int64_t i, n;
    const char* want;
  };
  const Case cases[] = {
      {"hello", 0, 5, "hello"},  {"hello", 1, 3, "ell"}, {"hello", 3, 10, "lo"}, {"hello", 4, 1, "o"},
      {"hello", 5, 1, ""},       {"hello", 6, 1, ""},    {"hello", -1, 2, ""},   {"hello", 0, 0, ""},
      {"hello", 2, -1, ""},      {"", 0, 0, ""},         {"", 0, 1, ""},         {"hello", 0, kMax, "hello"},
      {"hello", 2, kMax, "llo"}, {"hello", kMin, 3, ""}, {"hello", kMax, 3, ""}, {"hello", 1, kMin, ""},
  };
  for (const auto& c : cases) {
    TermRef t = MkSubstr(MkString(c.s), MkInt(c.i), MkInt(c.n));
    ASSERT_EQ(t->op, TermOp::kConstString);
    EXPECT_EQ(t->sval, c.want) << "substr(\"" << c.s << "\", " << c.i << ", " << c.n << ")";
  }
}

// The folded result must be exactly what Z3 computes for str.substr.
TEST(TermTest, SubstrFoldingAgreesWithZ3) {
  Solver solver;
  const std::vector<std::tuple<std::string, int64_t, int64_t>> cases = {
      {"hello", 1, 3}, {"hello", 3, 10}, {"hello", 5, 1}, {"hello", 7, 2}, {"hello", -1, 2},
      {"hello", 2, 0}, {"hello", 2, -3}, {"", 0, 2},      {"ab", 1, 1},    {"abc", 0, 100},
  };
  int64_t id = 100;
  for (const auto& [s, i, n] : cases) {
    auto x = SVar(++id, "x"), start = IVar(++id, "i"), len = IVar(++id, "l");
    TermRef folded = MkSubstr(MkString(s), MkInt(i), MkInt(n));
    ASSERT_TRUE(folded->IsConst());
    // With x, start, len pinned to the same constants but kept symbolic, Z3
    // must not find a different result.
    std::vector<TermRef> cs = {MkEq(x, MkString(s)), MkEq(start, MkInt(i)), MkEq(len, MkInt(n)),
                               MkNot(MkEq(MkSubstr(x, start, len), folded))};
    EXPECT_EQ(solver.Check(cs), R::kUnsat)
        << "substr(\"" << s << "\", " << i << ", " << n << ") folded to \"" << folded->sval << "\"";
    cs.back() = MkEq(MkSubstr(x, start, len), folded);
    EXPECT_EQ(solver.Check(cs), R::kSat);
  }
}

// to_int is SMT-LIB str.to_int: the folding and Z3 agree (below 2^63).
TEST(TermTest, ToIntFoldingAgreesWithZ3) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"0", 0}, {"0042", 42}, {"123456789012", 123456789012}, {"", -1}, {"-5", -1}, {" 5", -1}, {"5s", -1}, {"+1", -1},
  };
  z3::context ctx;  // Z3 itself: the cheap solver would fold x's value in
  for (const auto& [s, want] : cases) {
    TermRef folded = MkToInt(MkString(s));
    ExpectConstInt(folded, want);
    z3::solver z3s(ctx);
    z3s.add(ctx.string_val(s).stoi() != ctx.int_val(static_cast<int64_t>(want)));
    EXPECT_EQ(z3s.check(), z3::unsat) << "to_int(\"" << s << "\") folded to " << want;
  }
  ExpectConstInt(MkToInt(MkString("99999999999999999999")), kMax);  // saturates
  EXPECT_EQ(MkToInt(SVar(1))->op, TermOp::kToInt);
  EXPECT_EQ(TermToString(MkToInt(SVar(1, "age"))), "to_int(age#1)");
}

// A fresh Age that must be a number at least the origin's: a witness among
// the numbers the constraints name, without Z3; a contradiction by Z3.
TEST(SolverTest, ToIntConstraintsOnAFreshString) {
  Solver solver;
  TermRef age = SVar(1, "age");
  EXPECT_EQ(solver.Check({MkLe(MkInt(0), MkToInt(age))}), R::kSat);
  EXPECT_EQ(solver.Check({MkLe(MkInt(30), MkToInt(age)), MkNot(MkEq(age, MkString("30")))}), R::kSat);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
  EXPECT_EQ(solver.Check({MkLe(MkInt(0), MkToInt(age)), MkPrefixOf(MkString("-"), age)}), R::kUnsat);
}

TEST(TermTest, SubstrWithSymbolicOperandStaysSymbolic) {
  auto t = MkSubstr(SVar(1), MkInt(0), MkInt(2));
  EXPECT_EQ(t->op, TermOp::kSubstr);
  EXPECT_EQ(t->sort, Sort::kString);
  EXPECT_EQ(TermToString(t), "substr(s#1, 0, 2)");
}

// ----------------------------------------------------------------- MkEq

TEST(TermTest, EqFoldsConstants) {
  ExpectConstBool(MkEq(MkString("a"), MkString("a")), true);
  ExpectConstBool(MkEq(MkString("a"), MkString("b")), false);
  ExpectConstBool(MkEq(MkInt(3), MkInt(3)), true);
  ExpectConstBool(MkEq(MkInt(3), MkInt(4)), false);
  ExpectConstBool(MkEq(MkBool(true), MkBool(false)), false);
  // Syntactically equal non-constant operands.
  auto s = SVar(1);
  ExpectConstBool(MkEq(s, s), true);
  ExpectConstBool(MkEq(MkConcat(s, MkString("x")), MkConcat(SVar(1), MkString("x"))), true);
}

TEST(TermTest, EqCanonicalOrder) {
  auto x = SVar(1, "x"), y = SVar(2, "y");
  TermRef xy = MkEq(x, y), yx = MkEq(y, x);
  ASSERT_EQ(xy->op, TermOp::kEq);
  EXPECT_TRUE(TermEqual(xy, yx));
  EXPECT_EQ(xy->hash, yx->hash);
  // The smaller hash goes left.
  EXPECT_LE(xy->args[0]->hash, xy->args[1]->hash);
  // Constants go right, whichever side they came from.
  TermRef a = MkEq(MkString("k"), x), b = MkEq(x, MkString("k"));
  ASSERT_EQ(a->op, TermOp::kEq);
  EXPECT_TRUE(TermEqual(a, b));
  EXPECT_TRUE(a->args[1]->IsConst());
  EXPECT_TRUE(TermEqual(a->args[0], x));
  // A compound term against a constant.
  TermRef c = MkEq(MkInt(5), MkLen(x));
  EXPECT_TRUE(c->args[1]->IsConst());
  EXPECT_TRUE(TermEqual(c, MkEq(MkLen(x), MkInt(5))));
}

TEST(TermTest, EqOnBoolWithConstantSimplifies) {
  auto b = BVar(1);
  EXPECT_TRUE(TermEqual(MkEq(b, MkBool(true)), b));
  EXPECT_TRUE(TermEqual(MkEq(MkBool(true), b), b));
  EXPECT_TRUE(TermEqual(MkEq(b, MkBool(false)), MkNot(b)));
  EXPECT_TRUE(TermEqual(MkEq(MkBool(false), b), MkNot(b)));
}

// A concatenation with a constant end against a constant: the end must
// match, and then only the rest is compared.
TEST(TermTest, EqOfConcatenationWithAConstantEndFolds) {
  auto t = SVar(1, "t");
  ExpectConstBool(MkEq(MkConcat(MkString("W/"), t), MkString("\"a\"")), false);
  ExpectConstBool(MkEq(MkString("W"), MkConcat(MkString("W/"), t)), false);  // shorter than the head
  EXPECT_TRUE(TermEqual(MkEq(MkConcat(MkString("W/"), t), MkString("W/\"a\"")), MkEq(t, MkString("\"a\""))));
  EXPECT_TRUE(TermEqual(MkEq(MkConcat(t, MkString("\"")), MkString("\"a\"")), MkEq(t, MkString("\"a"))));
  ExpectConstBool(MkEq(MkConcat(t, MkString("x")), MkString("ay")), false);
  EXPECT_TRUE(TermEqual(MkEq(MkConcat(MkString("ab"), t), MkString("ab")), MkEq(t, MkString(""))));
  // Substituting into such an equality folds the same way.
  Bindings b;
  b[2] = MkString("\"a\"");
  ExpectConstBool(Substitute(MkEq(MkConcat(MkString("W/"), t), SVar(2)), b), false);
}

TEST(TermTest, TermEqualDistinguishesStructure) {
  auto x = SVar(1), y = SVar(2);
  EXPECT_FALSE(TermEqual(x, y));
  EXPECT_FALSE(TermEqual(MkString("a"), MkString("b")));
  EXPECT_FALSE(TermEqual(MkInt(1), MkBool(true)));
  EXPECT_FALSE(TermEqual(IVar(1), SVar(1)));  // same id, different sort
  EXPECT_FALSE(TermEqual(MkConcat(x, y), MkConcat(y, x)));
  EXPECT_FALSE(TermEqual(MkSub(IVar(1), IVar(2)), MkSub(IVar(2), IVar(1))));
  EXPECT_TRUE(TermEqual(MkConcat(x, y), MkConcat(SVar(1), SVar(2))));
}

// ------------------------------------------------------------ Substitute

TEST(TermTest, SubstituteRefoldsToConstants) {
  auto e = SVar(1, "etag"), n = IVar(2, "n");
  TermRef t = MkAnd(MkPrefixOf(MkString("W/"), e), MkLt(MkLen(e), n));
  Bindings b;
  b[1] = MkString("W/\"abc\"");
  TermRef partly = Substitute(t, b);
  EXPECT_FALSE(partly->IsConst());
  EXPECT_TRUE(MentionsVar(partly));
  // prefix folds to true, so the conjunction collapses to its other half.
  EXPECT_TRUE(TermEqual(partly, MkLt(MkInt(7), n)));
  b[2] = MkInt(8);
  ExpectConstBool(Substitute(t, b), true);
  b[2] = MkInt(7);
  ExpectConstBool(Substitute(t, b), false);
  // The original term is unchanged.
  EXPECT_EQ(t->op, TermOp::kAnd);
}

TEST(TermTest, SubstituteEveryOperator) {
  auto s = SVar(1), i = IVar(2), c = BVar(3);
  Bindings b;
  b[1] = MkString("hello");
  b[2] = MkInt(2);
  b[3] = MkBool(true);
  ExpectConstBool(Substitute(MkEq(s, MkString("hello")), b), true);
  ExpectConstBool(Substitute(MkNot(c), b), false);
  ExpectConstBool(Substitute(MkOr(c, MkEq(i, MkInt(9))), b), true);
  ExpectConstInt(Substitute(MkAdd(i, MkInt(1)), b), 3);
  ExpectConstInt(Substitute(MkSub(i, MkInt(5)), b), -3);
  ExpectConstInt(Substitute(MkMul(i, i), b), 4);
  ExpectConstBool(Substitute(MkLe(i, MkInt(2)), b), true);
  ExpectConstString(Substitute(MkConcat(s, s), b), "hellohello");
  ExpectConstInt(Substitute(MkLen(s), b), 5);
  ExpectConstBool(Substitute(MkSuffixOf(MkString("llo"), s), b), true);
  ExpectConstBool(Substitute(MkContains(s, MkString("ell")), b), true);
  ExpectConstString(Substitute(MkSubstr(s, i, MkInt(2)), b), "ll");
  ExpectConstString(Substitute(MkSubstr(s, i, MkInt(100)), b), "llo");
  ExpectConstInt(Substitute(MkIte(c, i, MkInt(0)), b), 2);
  ExpectConstInt(Substitute(MkToInt(s), b), -1);
}

TEST(TermTest, SubstituteWithoutBindingsReturnsSameNode) {
  auto t = MkConcat(SVar(1), MkString("x"));
  Bindings none;
  EXPECT_EQ(Substitute(t, none).get(), t.get());
  Bindings other;
  other[99] = MkString("zzz");
  EXPECT_EQ(Substitute(t, other).get(), t.get());
}

TEST(TermTest, SubstituteKeepsEqCanonical) {
  auto x = SVar(1), y = SVar(2), z = SVar(3);
  Bindings b;
  b[1] = z;  // not a constant: rename x to z
  TermRef t = Substitute(MkEq(x, y), b);
  EXPECT_TRUE(TermEqual(t, MkEq(y, z)));
  EXPECT_TRUE(TermEqual(t, MkEq(z, y)));
}

TEST(TermTest, CollectVarsAndMentionsVar) {
  auto x = SVar(1), n = IVar(2);
  TermRef t = MkAnd(MkEq(MkLen(x), n), MkPrefixOf(MkString("a"), MkConcat(x, x)));
  std::vector<TermRef> vars;
  CollectVars(t, &vars);
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_TRUE(MentionsVar(t));
  EXPECT_FALSE(MentionsVar(MkConcat(MkString("a"), MkString("b"))));
}

TEST(TermTest, TermToString) {
  auto e = SVar(3, "etag");
  EXPECT_EQ(TermToString(MkEq(MkLen(e), MkInt(5))), "(len(etag#3) == 5)");
  EXPECT_EQ(TermToString(MkNot(MkEq(e, MkString("x")))), "(etag#3 != \"x\")");
  EXPECT_EQ(TermToString(MkPrefixOf(MkString("W/"), e)), "starts_with(etag#3, \"W/\")");
  EXPECT_EQ(TermToString(MkString("a\"b")), "\"a\\\"b\"");
  EXPECT_EQ(TermToString(MkVar(Sort::kInt, 4, "")), "v#4");
}

// Integer arithmetic on constants must not silently wrap around: Z3 integers
// are unbounded, so a folded constant that wrapped would disagree with what
// the solver says about the very same term before substitution.
TEST(TermTest, FoldingDoesNotWrapAroundOnOverflow) {
  Solver solver;
  auto x = IVar(1, "x");
  // x + 1 < x is false for every mathematical integer x.
  TermRef wraps = MkLt(MkAdd(x, MkInt(1)), x);
  EXPECT_EQ(solver.Check({MkEq(x, MkInt(kMax)), wraps}), R::kUnsat);
  Bindings b;
  b[1] = MkInt(kMax);
  TermRef folded = Substitute(wraps, b);
  // Either left for Z3 (which says unsat) or folded to false; never `true`.
  EXPECT_NE(solver.Check({folded}), R::kSat) << TermToString(folded);
  b[1] = MkInt(kMin);
  EXPECT_NE(solver.Check({Substitute(MkLt(x, MkSub(x, MkInt(1))), b)}), R::kSat);
  b[1] = MkInt(kMax);
  EXPECT_NE(solver.Check({Substitute(MkLt(MkMul(x, MkInt(2)), MkInt(0)), b)}), R::kSat);
}

// ---------------------------------------------------------------- Solver

TEST(SolverTest, FastPathForConstants) {
  Solver solver;
  EXPECT_EQ(solver.Check({}), R::kSat);
  EXPECT_EQ(solver.Check({MkBool(true), MkBool(true)}), R::kSat);
  EXPECT_EQ(solver.Check({MkBool(true), MkBool(false)}), R::kUnsat);
  // A false constant decides even when symbolic constraints are present.
  EXPECT_EQ(solver.Check({MkEq(SVar(1), MkString("a")), MkBool(false)}), R::kUnsat);
  EXPECT_EQ(solver.stats().checks, 4u);
  EXPECT_EQ(solver.stats().fast_path, 4u);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
}

TEST(SolverTest, MaybeSatFastPath) {
  Solver solver;
  EXPECT_FALSE(solver.MaybeSat({}, MkBool(false)));
  EXPECT_TRUE(solver.MaybeSat({}, MkBool(true)));
  EXPECT_EQ(solver.stats().z3_calls, 0u);
  auto s = SVar(1);
  EXPECT_TRUE(solver.MaybeSat({MkEq(MkLen(s), MkInt(3))}, MkPrefixOf(MkString("ab"), s)));
  EXPECT_FALSE(solver.MaybeSat({MkEq(MkLen(s), MkInt(1))}, MkPrefixOf(MkString("ab"), s)));
}

TEST(SolverTest, StringPrefixConstraints) {
  Solver solver;
  auto t = SVar(1, "tag");
  EXPECT_EQ(solver.Check({MkPrefixOf(MkString("W/"), t)}), R::kSat);
  EXPECT_EQ(solver.Check({MkPrefixOf(MkString("W/"), t), MkNot(MkPrefixOf(MkString("W"), t))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkPrefixOf(MkString("ab"), t), MkPrefixOf(MkString("ac"), t)}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkPrefixOf(MkString("ab"), t), MkPrefixOf(MkString("abc"), t)}), R::kSat);
  EXPECT_EQ(solver.Check({MkPrefixOf(MkString("ab"), t), MkEq(t, MkString("xab"))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkSuffixOf(MkString("\""), t), MkPrefixOf(MkString("\""), t), MkEq(MkLen(t), MkInt(1))}),
            R::kSat);  // t == "\""
  EXPECT_EQ(solver.Check({MkContains(t, MkString("xyz")), MkLt(MkLen(t), MkInt(3))}), R::kUnsat);
}

TEST(SolverTest, StringLengthConstraints) {
  Solver solver;
  auto s = SVar(1);
  EXPECT_EQ(solver.Check({MkEq(MkLen(s), MkInt(0)), MkNot(MkEq(s, MkString("")))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkLt(MkLen(s), MkInt(0))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(MkLen(s), MkInt(4)), MkEq(s, MkString("abcd"))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(MkLen(s), MkInt(4)), MkEq(s, MkString("abc"))}), R::kUnsat);
}

TEST(SolverTest, StringConcatConstraints) {
  Solver solver;
  auto a = SVar(1, "a"), b = SVar(2, "b");
  // a + "-" + b == "x-y" with |a| == 1.
  TermRef cat = MkConcat(MkConcat(a, MkString("-")), b);
  EXPECT_EQ(solver.Check({MkEq(cat, MkString("x-y")), MkEq(MkLen(a), MkInt(1))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(cat, MkString("x-y")), MkEq(a, MkString("x")), MkNot(MkEq(b, MkString("y")))}),
            R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(cat, MkString("xy"))}), R::kUnsat);  // no '-' in "xy"
  // len(a + b) == len(a) + len(b).
  EXPECT_EQ(solver.Check({MkNot(MkEq(MkLen(MkConcat(a, b)), MkAdd(MkLen(a), MkLen(b))))}), R::kUnsat);
  // Quoting an ETag: "\"" + t + "\"" == "\"v1\"" forces t == "v1".
  auto t = SVar(3, "t");
  TermRef quoted = MkConcat(MkConcat(MkString("\""), t), MkString("\""));
  EXPECT_EQ(solver.Check({MkEq(quoted, MkString("\"v1\"")), MkNot(MkEq(t, MkString("v1")))}), R::kUnsat);
}

TEST(SolverTest, IntAndBoolConstraints) {
  Solver solver;
  auto n = IVar(1), m = IVar(2), b = BVar(3);
  EXPECT_EQ(solver.Check({MkLt(n, m), MkLt(m, n)}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkLe(n, m), MkLe(m, n), MkNot(MkEq(n, m))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(MkMul(n, MkInt(2)), MkInt(7))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(MkSub(n, m), MkInt(3)), MkEq(m, MkInt(kMax))}), R::kSat);
  EXPECT_EQ(solver.Check({b, MkNot(b)}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkOr(b, MkEq(n, MkInt(1))), MkNot(b)}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(MkIte(b, n, m), MkInt(5)), MkEq(n, MkInt(4)), MkEq(m, MkInt(6))}), R::kUnsat);
}

TEST(SolverTest, CacheHitsAreCounted) {
  Solver solver;
  auto s = SVar(1);
  TermRef c1 = MkPrefixOf(MkString("W/"), s);
  TermRef c2 = MkEq(MkLen(s), MkInt(5));
  EXPECT_EQ(solver.Check({c1, c2}), R::kSat);
  EXPECT_EQ(solver.stats().z3_calls, 1u);
  EXPECT_EQ(solver.stats().cache_hits, 0u);
  // Same set again, in another order, with a duplicate and a true constant.
  EXPECT_EQ(solver.Check({c2, c1}), R::kSat);
  EXPECT_EQ(solver.Check({c1, MkBool(true), c2, c1}), R::kSat);
  // Structurally equal terms built anew hit the cache too.
  EXPECT_EQ(solver.Check({MkEq(MkLen(SVar(1)), MkInt(5)), MkPrefixOf(MkString("W/"), SVar(1))}), R::kSat);
  EXPECT_EQ(solver.stats().z3_calls, 1u);
  EXPECT_EQ(solver.stats().cache_hits, 3u);
  EXPECT_EQ(solver.stats().checks, 4u);
  // Unsat answers are cached as well.
  TermRef c3 = MkEq(MkLen(s), MkInt(1));
  EXPECT_EQ(solver.Check({c1, c3}), R::kUnsat);
  EXPECT_EQ(solver.Check({c3, c1}), R::kUnsat);
  EXPECT_EQ(solver.stats().z3_calls, 2u);
  EXPECT_EQ(solver.stats().cache_hits, 4u);
  EXPECT_EQ(solver.stats().z3_unknown, 0u);
  EXPECT_GE(solver.stats().z3_seconds, 0.0);
}

TEST(SolverTest, ChecksAreIndependent) {
  // push/pop: constraints of one check do not leak into the next.
  Solver solver;
  auto s = SVar(1);
  EXPECT_EQ(solver.Check({MkEq(s, MkString("a"))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(s, MkString("b"))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(s, MkString("a")), MkEq(s, MkString("b"))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(s, MkString("c"))}), R::kSat);
}

TEST(SolverTest, VariablesOfDifferentSortsWithTheSameIdAreDistinct) {
  Solver solver;
  EXPECT_EQ(solver.Check({MkEq(IVar(1), MkInt(3)), MkEq(SVar(1), MkString("x")), BVar(1)}), R::kSat);
}

// Concrete folding and Z3 must agree on what a string constant is. Spec
// strings are byte strings (len("é") == 2 when folded); the solver must see
// the same bytes, or a symbolic path would be judged differently from the
// concrete one.
TEST(SolverTest, StringConstantsReachZ3Verbatim) {
  Solver solver;
  const std::vector<std::string> samples = {
      "plain",
      "back\\slash",
      "a\\u{62}c",  // looks like an SMT-LIB escape; is 8 bytes here
      "a\\x41",     // likewise
      std::string("nul\0byte", 8),
      "caf\xC3\xA9",  // UTF-8: 5 bytes
  };
  int64_t id = 0;
  for (const std::string& s : samples) {
    auto x = SVar(++id, "x");
    int64_t bytes = static_cast<int64_t>(s.size());
    ExpectConstInt(MkLen(MkString(s)), bytes);
    EXPECT_EQ(solver.Check({MkEq(x, MkString(s)), MkEq(MkLen(x), MkInt(bytes))}), R::kSat)
        << "Z3 disagrees with len(\"" << s << "\") == " << bytes;
    // Distinct spec strings stay distinct for Z3.
    EXPECT_EQ(solver.Check({MkEq(x, MkString(s)), MkEq(x, MkString(s + "!"))}), R::kUnsat);
  }
  // "a\u{62}c" (8 bytes) and "abc" are different strings.
  auto y = SVar(100, "y");
  EXPECT_EQ(solver.Check({MkEq(y, MkString("a\\u{62}c")), MkEq(y, MkString("abc"))}), R::kUnsat);
  auto z = SVar(101, "z");
  EXPECT_EQ(solver.Check({MkEq(z, MkString(std::string("nul\0byte", 8))), MkEq(z, MkString("nul"))}), R::kUnsat);
}

// A variable a constraint decides (`v == c`) is put into the others: the
// ETag disjunctions of http_webdav.dspec (`t` is `now` or `W/` + `now`)
// are decided without Z3 once one side is known.
TEST(SolverTest, DecidedVariablesAreSubstitutedWithoutZ3) {
  Solver solver;
  auto now = SVar(1, "now"), t = SVar(2, "t");
  auto shown = MkOr(MkEq(t, now), MkEq(t, MkConcat(MkString("W/"), now)));
  EXPECT_EQ(solver.Check({MkEq(t, MkString("W/\"a\"")), shown, MkEq(now, MkString("\"a\""))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(t, MkString("W/\"a\"")), shown, MkEq(now, MkString("W/\"a\""))}), R::kSat);
  EXPECT_EQ(solver.Check({MkEq(t, MkString("\"a\"")), shown, MkEq(now, MkString("\"b\""))}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(t, MkString("\"a\"")), shown, MkPrefixOf(MkString("W/"), now)}), R::kUnsat);
  EXPECT_EQ(solver.Check({MkEq(now, MkString("x")), MkEq(now, MkString("y"))}), R::kUnsat);
  auto b = BVar(3);
  EXPECT_EQ(solver.Check({b, MkOr(MkNot(b), MkEq(now, MkString("x"))), MkEq(now, MkString("y"))}), R::kUnsat);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
}

// Z3 itself on a conjunction of the terms the test below builds.
R Z3Says(const std::vector<TermRef>& system) {
  static z3::context ctx;
  std::function<z3::expr(const TermRef&)> tr = [&](const TermRef& x) -> z3::expr {
    switch (x->op) {
      case TermOp::kVar:
        return x->sort == Sort::kBool ? ctx.bool_const(("b" + std::to_string(x->ival)).c_str())
                                      : ctx.string_const(("s" + std::to_string(x->ival)).c_str());
      case TermOp::kConstBool:
        return ctx.bool_val(x->ival != 0);
      case TermOp::kConstString:
        return ctx.string_val(x->sval);
      case TermOp::kEq:
        return tr(x->args[0]) == tr(x->args[1]);
      case TermOp::kNot:
        return !tr(x->args[0]);
      case TermOp::kAnd:
        return tr(x->args[0]) && tr(x->args[1]);
      case TermOp::kOr:
        return tr(x->args[0]) || tr(x->args[1]);
      case TermOp::kConcat:
        return z3::concat(tr(x->args[0]), tr(x->args[1]));
      case TermOp::kPrefixOf:
        return z3::prefixof(tr(x->args[0]), tr(x->args[1]));
      default:
        ADD_FAILURE() << "unexpected term " << TermToString(x);
        return ctx.bool_val(true);
    }
  };
  z3::solver z(ctx);
  for (const auto& c : system) z.add(tr(c));
  switch (z.check()) {
    case z3::sat:
      return R::kSat;
    case z3::unsat:
      return R::kUnsat;
    default:
      return R::kUnknown;
  }
}

// Random systems of tag equalities, prefixes (`W/`, `W`, `W/"a`) and
// disjunctions over three or six string variables and a bool: the solver
// (substitution, free variables, prefix literals, case splits, witnesses,
// Z3) answers exactly as Z3 alone does.
TEST(SolverTest, SubstitutingDecidedVariablesAgreesWithZ3) {
  std::mt19937_64 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const std::vector<std::string> tags = {"\"a\"", "W/\"a\"", "\"b\"", "W/W/\"a\""};
  const std::vector<std::string> prefixes = {"W/", "W/", "W", "W/\"a"};
  for (int nvars : {3, 6}) {
    auto str = [&]() -> TermRef {
      switch (pick(4)) {
        case 0:
          return MkString(tags[pick(4)]);
        case 1:
          return MkConcat(MkString("W/"), SVar(pick(nvars)));
        default:
          return SVar(pick(nvars));
      }
    };
    std::function<TermRef(int)> atom = [&](int depth) -> TermRef {
      switch (pick(depth > 0 ? 7 : 5)) {
        case 0:
          return MkPrefixOf(MkString(prefixes[pick(4)]), SVar(pick(nvars)));
        case 1:
          return BVar(10);
        case 2:
          return MkNot(MkEq(str(), str()));
        case 3:
          return MkEq(str(), str());
        case 4:
          return MkNot(MkPrefixOf(MkString(prefixes[pick(4)]), SVar(pick(nvars))));
        case 5:
          return MkOr(atom(depth - 1), atom(depth - 1));
        default:
          return MkNot(atom(depth - 1));
      }
    };
    int sat = 0, unsat = 0;
    for (int round = 0; round < 300; ++round) {
      std::vector<TermRef> system;
      for (int i = 0, n = 1 + pick(2 * nvars); i < n; ++i) system.push_back(atom(2));
      Solver solver;
      R got = solver.Check(system);
      std::string text;
      for (const auto& c : system) text += TermToString(c) + "; ";
      ASSERT_EQ(got, Z3Says(system)) << text;
      (got == R::kSat ? sat : unsat)++;
    }
    EXPECT_GT(sat, 50) << nvars << " variables";
    EXPECT_GT(unsat, 30) << nvars << " variables";
  }
}

// Tags of PUTs whose responses did not show them: weak or strong, each
// unlike the one before (RFC 9110 §8.8.3), a chain as long as the history.
// Decided without Z3 however long, and a tag that must be both weak and
// strong is unsat.
TEST(SolverTest, ChainsOfWeakOrStrongTagsNeedNoZ3) {
  Solver solver;
  std::vector<TermRef> chain;
  for (int i = 0; i < 40; ++i) {
    TermRef weak = MkPrefixOf(MkString("W/"), SVar(i));
    chain.push_back(i % 3 == 0 ? weak : MkNot(weak));
    if (i > 0) chain.push_back(MkNot(MkEq(SVar(i), SVar(i - 1))));
  }
  chain.push_back(MkNot(MkEq(SVar(7), MkString("\"x\""))));
  EXPECT_EQ(solver.Check(chain), R::kSat);
  // A response's new value tied to the last tag.
  chain.push_back(MkOr(MkEq(SVar(39), SVar(100)), MkEq(SVar(39), MkConcat(MkString("W/"), SVar(100)))));
  EXPECT_EQ(solver.Check(chain), R::kSat);
  chain.push_back(MkPrefixOf(MkString("W/\"a"), SVar(36)));  // weak already
  EXPECT_EQ(solver.Check(chain), R::kSat);
  chain.push_back(MkNot(MkPrefixOf(MkString("W"), SVar(36))));
  EXPECT_EQ(solver.Check(chain), R::kUnsat);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
}

// What checking GETs and PUTs on Apache at 4 connections asks (tags weak
// for a second after a write): the tags of GETs not yet answered, each the
// one before or its W/ form, ending at a strong PUT tag; and a tag unlike
// the one before it. Z3 took up to 340 ms for each (a 373-line trace: 457
// calls, 6.7 s); splitting the disjunctions, substituting the variable
// each side defines and dropping disequalities the prefixes imply decide
// them without it.
TEST(SolverTest, ChainsOfShownTagsOfConcurrentGetsNeedNoZ3) {
  Solver solver;
  auto weak = [](int v) { return MkPrefixOf(MkString("W/"), SVar(v)); };
  auto shown = [](int stored, int now) {  // stored == now || stored == "W/" + now
    return MkOr(MkEq(SVar(stored), SVar(now)), MkEq(SVar(stored), MkConcat(MkString("W/"), SVar(now))));
  };
  std::vector<TermRef> chain = {
      MkOr(MkEq(SVar(3), MkString("W/\"0-a\"")), MkEq(SVar(3), MkString("W/W/\"0-a\""))),
      shown(1, 3),
      shown(0, 1),
      MkNot(weak(0)),
      MkNot(MkEq(SVar(0), SVar(5))),
      MkNot(weak(5)),
      MkNot(MkEq(SVar(6), SVar(5))),
      weak(6),
  };
  // The PUT's strong tag cannot be shown only weak.
  EXPECT_EQ(solver.Check(chain), R::kUnsat);
  EXPECT_EQ(Z3Says(chain), R::kUnsat);
  std::vector<TermRef> unlike = {
      MkNot(weak(1)),
      shown(0, 1),  // 0 == 1 || 0 == "W/" + 1
      MkNot(shown(1, 2)),
      MkNot(weak(0)),
      MkNot(MkEq(SVar(4), SVar(0))),
      MkNot(weak(4)),
      MkNot(MkEq(SVar(4), MkString("W/\"0-b\""))),
  };
  EXPECT_EQ(solver.Check(unlike), R::kSat);
  EXPECT_EQ(Z3Says(unlike), R::kSat);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
}

// ------------------------------------------------------ difference logic

// A symbolic counter that only grows (memcached's cas uniques): a chain of
// 300 variables, each above the last, is decided without Z3 either way.
TEST(SolverTest, LongChainsOfComparisonsNeedNoZ3) {
  Solver solver;
  std::vector<TermRef> chain = {MkLt(MkInt(0), IVar(0))};
  for (int i = 1; i < 300; ++i) chain.push_back(MkLt(IVar(i - 1), IVar(i)));
  EXPECT_EQ(solver.Check(chain), R::kSat);
  chain.push_back(MkLe(IVar(299), MkInt(300)));  // x299 >= 300 is forced
  EXPECT_EQ(solver.Check(chain), R::kSat);
  chain.back() = MkLe(IVar(299), MkInt(299));
  EXPECT_EQ(solver.Check(chain), R::kUnsat);
  chain.back() = MkNot(MkLt(IVar(0), IVar(299)));  // closes a cycle
  EXPECT_EQ(solver.Check(chain), R::kUnsat);
  chain.back() = MkEq(IVar(299), MkAdd(IVar(0), MkInt(299)));
  EXPECT_EQ(solver.Check(chain), R::kSat);
  // A cas unique compared with a number a client sent: either way.
  chain.back() = MkNot(MkEq(IVar(299), MkInt(300)));
  EXPECT_EQ(solver.Check(chain), R::kSat);
  chain.push_back(MkLe(IVar(299), MkInt(300)));
  EXPECT_EQ(solver.Check(chain), R::kUnsat);
  EXPECT_EQ(solver.stats().z3_calls, 0u);
}

// Random small systems of comparisons (disequalities too): the fast path
// answers exactly as the other procedures (a witness or Z3) do. The
// reference sees the same system plus a string disequality on its own
// variable, which keeps it off the fast path and changes nothing.
TEST(SolverTest, DifferenceLogicAgreesWithZ3) {
  std::mt19937_64 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto side = [&]() -> TermRef {
    TermRef v = IVar(pick(4));
    TermRef k = MkInt(pick(7) - 3);
    switch (pick(5)) {
      case 0:
        return k;
      case 1:
        return MkAdd(v, k);
      case 2:
        return MkAdd(k, v);
      case 3:
        return MkSub(v, k);
      default:
        return v;
    }
  };
  int sat = 0, unsat = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<TermRef> system;
    for (int i = 0, n = 1 + pick(6); i < n; ++i) {
      TermRef a = side(), b = side();
      switch (pick(6)) {
        case 5:
          system.push_back(MkNot(MkEq(a, b)));
          break;
        case 0:
          system.push_back(MkLt(a, b));
          break;
        case 1:
          system.push_back(MkLe(a, b));
          break;
        case 2:
          system.push_back(MkEq(a, b));
          break;
        case 3:
          system.push_back(MkNot(MkLt(a, b)));
          break;
        default:
          system.push_back(MkNot(MkLe(a, b)));
          break;
      }
    }
    Solver fast, reference;
    R got = fast.Check(system);
    std::vector<TermRef> slow = system;
    slow.push_back(MkNot(MkEq(SVar(99), MkString("zz"))));
    R want = reference.Check(slow);
    std::string text;
    for (const auto& c : system) text += TermToString(c) + "; ";
    ASSERT_EQ(got, want) << text;
    EXPECT_EQ(fast.stats().z3_calls, 0u) << text;
    (got == R::kSat ? sat : unsat)++;
  }
  EXPECT_GT(sat, 50);
  EXPECT_GT(unsat, 50);
}

// A counter that only grows, with only its newest value reachable: the
// chain becomes one bound on the newest value (it is at least 300).
TEST(EliminationTest, AChainOfUnreachableCountersLeavesOneBound) {
  std::vector<TermRef> chain = {MkLt(MkInt(0), IVar(0))};
  for (int i = 1; i < 300; ++i) chain.push_back(MkLt(IVar(i - 1), IVar(i)));
  auto live = [](const TermRef& v) { return v->ival == 299; };
  ASSERT_TRUE(EliminateUnreachableIntVariables(&chain, live));
  ASSERT_EQ(chain.size(), 1u) << TermToString(chain[0]);
  Solver solver;
  EXPECT_EQ(solver.Check({chain[0], MkEq(IVar(299), MkInt(300))}), R::kSat);
  EXPECT_EQ(solver.Check({chain[0], MkEq(IVar(299), MkInt(299))}), R::kUnsat);
  // Nothing to eliminate: unchanged.
  std::vector<TermRef> two = {MkLt(IVar(1), IVar(2))};
  EXPECT_FALSE(EliminateUnreachableIntVariables(&two, [](const TermRef&) { return true; }));
  // A variable that also occurs in a disequality or another kind of
  // constraint stays.
  std::vector<TermRef> pinned = {MkLt(IVar(1), IVar(2)), MkNot(MkEq(IVar(2), MkInt(5)))};
  EXPECT_FALSE(EliminateUnreachableIntVariables(&pinned, [](const TermRef& v) { return v->ival == 1; }));
  // ... but one bounded on one side only just goes.
  EXPECT_TRUE(EliminateUnreachableIntVariables(&pinned, [](const TermRef&) { return false; }));
  EXPECT_EQ(pinned.size(), 1u);
}

// Random satisfiable systems over live x0, x1 and unreachable x2, x3:
// after elimination, exactly the same values of x0, x1 satisfy them.
TEST(EliminationTest, EliminationKeepsExactlyTheSolutionsOfTheLiveVariables) {
  std::mt19937_64 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto side = [&]() -> TermRef {
    TermRef v = IVar(pick(4));
    switch (pick(3)) {
      case 0:
        return MkInt(pick(7) - 3);
      case 1:
        return MkAdd(v, MkInt(pick(5) - 2));
      default:
        return v;
    }
  };
  auto live = [](const TermRef& v) { return v->ival < 2; };
  int changed = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<TermRef> system;
    for (int i = 0, n = 1 + pick(6); i < n; ++i)
      system.push_back(pick(3) == 0 ? MkLe(side(), side()) : MkLt(side(), side()));
    Solver solver;
    if (solver.Check(system) != R::kSat) continue;
    std::vector<TermRef> projected = system;
    if (!EliminateUnreachableIntVariables(&projected, live)) continue;
    ++changed;
    std::string text;
    for (const auto& c : system) text += TermToString(c) + "; ";
    for (int x0 = -4; x0 <= 4; ++x0)
      for (int x1 = -4; x1 <= 4; ++x1) {
        std::vector<TermRef> a = system, b = projected;
        for (auto* v : {&a, &b}) {
          v->push_back(MkEq(IVar(0), MkInt(x0)));
          v->push_back(MkEq(IVar(1), MkInt(x1)));
        }
        ASSERT_EQ(solver.Check(a), solver.Check(b)) << text << " at x0=" << x0 << " x1=" << x1;
      }
  }
  EXPECT_GT(changed, 50);
}

}  // namespace
// A step's variables read by the step; ids beyond the encoding fall back.
TEST(StepVarIdTest, EncodesTheStepAndReadsBack) {
  EXPECT_EQ(VarIdText(7), "7");
  EXPECT_EQ(VarIdText(StepVarId(false, 5, 0)), "5.0");
  EXPECT_EQ(VarIdText(StepVarId(true, 12, 3)), "o12.3");
  EXPECT_NE(StepVarId(false, 5, 1), StepVarId(true, 5, 1));
  EXPECT_NE(StepVarId(false, 5, 1), StepVarId(false, 6, 1));
  EXPECT_EQ(StepVarId(false, int64_t{1} << 48, 0), -1);
  EXPECT_EQ(StepVarId(false, 1, 4096), -1);
  EXPECT_EQ(TermToString(MkVar(Sort::kString, StepVarId(false, 9, 2), "fresh@3:4")), "fresh@3:4#9.2");
}

}  // namespace dualswarm::sym
