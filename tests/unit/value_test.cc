// Unit tests for engine/ir/value: persistent map updates, Hash/equality
// consistency, options, folding of constant terms to concrete values and
// SubstituteValue.
#include "engine/ir/value.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/ir/json.h"
#include "engine/sym/term.h"
#include "gtest/gtest.h"

namespace dualswarm::ir {
namespace {

using sym::MkVar;
using sym::Sort;

Value S(const std::string& s) { return Value::String(s); }
Value I(int64_t i) { return Value::Int(i); }

TEST(ValueTest, DefaultIsNull) {
  Value v;
  EXPECT_TRUE(v.is_null());
  EXPECT_EQ(v, Value::Null());
  EXPECT_EQ(v.kind(), Value::Kind::kNull);
}

TEST(ValueTest, ScalarAccessors) {
  EXPECT_TRUE(Value::Bool(true).as_bool());
  EXPECT_FALSE(Value::Bool(false).as_bool());
  EXPECT_EQ(I(std::numeric_limits<int64_t>::min()).as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(S("abc").as_string(), "abc");
  // Accessors of the wrong kind return empty defaults instead of crashing.
  EXPECT_EQ(I(1).as_string(), "");
  EXPECT_TRUE(S("x").as_list().empty());
  EXPECT_TRUE(S("x").as_map().empty());
  EXPECT_TRUE(I(1).inner().is_null());
  EXPECT_EQ(I(1).Find("k"), nullptr);
}

TEST(ValueTest, KindsAreDistinct) {
  EXPECT_NE(I(1), Value::Bool(true));
  EXPECT_NE(I(0), Value::Null());
  EXPECT_NE(I(0), Value::Bool(false));
  EXPECT_NE(S(""), Value::Null());
  EXPECT_NE(Value::List({}), Value::Map({}));
  EXPECT_NE(Value::None(), Value::Null());
  EXPECT_NE(Value::Some(I(1)), I(1));
  EXPECT_NE(S("1"), I(1));
}

TEST(ValueTest, MapConstructorSortsAndLastDuplicateWins) {
  Value m = Value::Map({{"b", I(2)}, {"a", I(1)}, {"c", I(3)}, {"a", I(10)}});
  ASSERT_EQ(m.as_map().size(), 3u);
  EXPECT_EQ(m.as_map()[0].first, "a");
  EXPECT_EQ(m.as_map()[0].second, I(10));
  EXPECT_EQ(m.as_map()[1].first, "b");
  EXPECT_EQ(m.as_map()[2].first, "c");
  // Insertion order does not matter for equality.
  EXPECT_EQ(m, Value::Map({{"c", I(3)}, {"a", I(10)}, {"b", I(2)}}));
}

TEST(ValueTest, FindOnMap) {
  Value m = Value::Map({{"x", I(1)}, {"y", S("two")}});
  ASSERT_NE(m.Find("x"), nullptr);
  EXPECT_EQ(*m.Find("x"), I(1));
  ASSERT_NE(m.Find("y"), nullptr);
  EXPECT_EQ(*m.Find("y"), S("two"));
  EXPECT_EQ(m.Find("z"), nullptr);
  EXPECT_EQ(m.Find(""), nullptr);
  EXPECT_EQ(m.Find("xx"), nullptr);
  EXPECT_EQ(Value::Map({}).Find("x"), nullptr);
}

TEST(ValueTest, SetIsPersistent) {
  Value m0 = Value::Map({{"a", I(1)}, {"c", I(3)}});
  std::string before = m0.ToString();
  uint64_t h0 = m0.Hash();

  Value m1 = m0.Set("b", I(2));    // insert in the middle
  Value m2 = m1.Set("a", I(100));  // overwrite
  Value m3 = m2.Set("z", I(26));   // append
  Value m4 = m3.Set("0", I(0));    // prepend

  // The old values are unchanged.
  EXPECT_EQ(m0.ToString(), before);
  EXPECT_EQ(m0.Hash(), h0);
  EXPECT_EQ(m0.as_map().size(), 2u);
  EXPECT_EQ(m0.Find("b"), nullptr);
  EXPECT_EQ(*m0.Find("a"), I(1));
  EXPECT_EQ(*m1.Find("a"), I(1));
  EXPECT_EQ(m1.Find("z"), nullptr);

  // The new values have the updates, with keys kept sorted.
  EXPECT_EQ(m1, Value::Map({{"a", I(1)}, {"b", I(2)}, {"c", I(3)}}));
  EXPECT_EQ(m2, Value::Map({{"a", I(100)}, {"b", I(2)}, {"c", I(3)}}));
  EXPECT_EQ(m3.as_map().back().first, "z");
  EXPECT_EQ(m4.as_map().front().first, "0");
  EXPECT_EQ(m4.as_map().size(), 5u);
  for (size_t i = 1; i < m4.as_map().size(); ++i) EXPECT_LT(m4.as_map()[i - 1].first, m4.as_map()[i].first);
}

TEST(ValueTest, SetOnEmptyMap) {
  Value e = Value::Map({});
  Value one = e.Set("k", S("v"));
  EXPECT_TRUE(e.as_map().empty());
  EXPECT_EQ(one, Value::Map({{"k", S("v")}}));
}

TEST(ValueTest, RemoveIsPersistent) {
  Value m0 = Value::Map({{"a", I(1)}, {"b", I(2)}, {"c", I(3)}});
  Value m1 = m0.Remove("b");
  EXPECT_EQ(m1, Value::Map({{"a", I(1)}, {"c", I(3)}}));
  EXPECT_EQ(m0, Value::Map({{"a", I(1)}, {"b", I(2)}, {"c", I(3)}}));
  ASSERT_NE(m0.Find("b"), nullptr);
  // Removing an absent key returns an equal map.
  Value m2 = m1.Remove("zz");
  EXPECT_EQ(m2, m1);
  // Removing everything gives the empty map.
  EXPECT_EQ(m1.Remove("a").Remove("c"), Value::Map({}));
  EXPECT_EQ(m1.Remove("a").Remove("c").Hash(), Value::Map({}).Hash());
}

TEST(ValueTest, SetThenRemoveEqualsOriginal) {
  Value m0 = Value::Map({{"a", I(1)}, {"c", I(3)}});
  Value round = m0.Set("b", I(2)).Remove("b");
  EXPECT_EQ(round, m0);
  EXPECT_EQ(round.Hash(), m0.Hash());
}

TEST(ValueTest, HashIsCachedButNotSharedWithUpdates) {
  Value m0 = Value::Map({{"a", I(1)}});
  uint64_t h0 = m0.Hash();  // computes and caches
  Value m1 = m0.Set("a", I(2));
  EXPECT_NE(m1.Hash(), h0);
  EXPECT_NE(m1, m0);
  EXPECT_EQ(m0.Hash(), h0);
  Value l0 = Value::List({I(1)});
  uint64_t lh = l0.Hash();
  Value l1 = Value::List({I(2)});
  EXPECT_NE(l1.Hash(), lh);
}

// Pairs that must compare equal, built in different ways.
TEST(ValueTest, EqualValuesHaveEqualHashes) {
  auto var = MkVar(Sort::kString, 7, "etag");
  std::vector<std::pair<Value, Value>> eq = {
      {Value::Null(), Value()},
      {I(5), I(5)},
      {Value::Bool(true), Value::Bool(true)},
      {S("abc"), S(std::string("ab") + "c")},
      {Value::List({I(1), S("x")}), Value::List({I(1), S("x")})},
      {Value::Map({{"a", I(1)}, {"b", I(2)}}), Value::Map({{"b", I(2)}, {"a", I(1)}})},
      {Value::Map({{"a", I(1)}}).Set("b", I(2)), Value::Map({{"a", I(1)}, {"b", I(2)}})},
      {Value::Map({{"a", I(1)}, {"b", I(2)}}).Remove("b"), Value::Map({{"a", I(1)}})},
      {Value::None(), Value::None()},
      {Value::Some(S("x")), Value::Some(S("x"))},
      {Value::Some(Value::None()), Value::Some(Value::None())},
      {Value::Sym(var), Value::Sym(MkVar(Sort::kString, 7, "etag"))},
      {Value::Sym(sym::MkConcat(var, sym::MkString("!"))),
       Value::Sym(sym::MkConcat(MkVar(Sort::kString, 7, "etag"), sym::MkString("!")))},
      {Value::Sym(sym::MkInt(3)), I(3)},
      {Value::Map({{"t", Value::Sym(var)}}), Value::Map({{"t", Value::Sym(var)}})},
      {*ParseJson(R"({"x":[1,{"y":null}]})"),
       Value::Map({{"x", Value::List({I(1), Value::Map({{"y", Value::Null()}})})}})},
  };
  for (const auto& [a, b] : eq) {
    EXPECT_EQ(a, b) << a.ToString() << " vs " << b.ToString();
    EXPECT_EQ(b, a) << a.ToString() << " vs " << b.ToString();
    EXPECT_EQ(a.Hash(), b.Hash()) << a.ToString();
  }
}

TEST(ValueTest, DifferentValuesCompareUnequal) {
  std::vector<Value> all = {
      Value::Null(),
      Value::Bool(false),
      Value::Bool(true),
      I(0),
      I(1),
      I(-1),
      S(""),
      S("a"),
      S("b"),
      Value::List({}),
      Value::List({I(1)}),
      Value::List({I(1), I(2)}),
      Value::List({I(2), I(1)}),
      Value::Map({}),
      Value::Map({{"a", I(1)}}),
      Value::Map({{"a", I(2)}}),
      Value::Map({{"b", I(1)}}),
      Value::None(),
      Value::Some(Value::Null()),
      Value::Some(I(1)),
      Value::Sym(MkVar(Sort::kInt, 1, "n")),
      Value::Sym(MkVar(Sort::kInt, 2, "n")),
      Value::Sym(MkVar(Sort::kString, 1, "s")),
  };
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < all.size(); ++j) {
      if (i == j) {
        EXPECT_EQ(all[i], all[j]);
      } else {
        EXPECT_NE(all[i], all[j]) << all[i].ToString() << " vs " << all[j].ToString();
      }
    }
  }
}

TEST(ValueTest, CopiesShareAndCompareEqual) {
  Value m = Value::Map({{"k", Value::List({S("deep")})}});
  Value copy = m;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy, m);
  EXPECT_EQ(&copy.as_map(), &m.as_map());  // payload is shared
  Value changed = copy.Set("k", I(1));
  EXPECT_EQ(copy, m);
  EXPECT_NE(changed, m);
}

TEST(ValueTest, Options) {
  Value none = Value::None();
  EXPECT_TRUE(none.is_option());
  EXPECT_FALSE(none.has_value());
  EXPECT_TRUE(none.inner().is_null());
  Value some = Value::Some(S("v"));
  EXPECT_TRUE(some.is_option());
  EXPECT_TRUE(some.has_value());
  EXPECT_EQ(some.inner(), S("v"));
  // some(null) is not none.
  Value some_null = Value::Some(Value::Null());
  EXPECT_TRUE(some_null.has_value());
  EXPECT_NE(some_null, none);
  EXPECT_NE(some_null.Hash(), none.Hash());
  // Nested options.
  Value nested = Value::Some(Value::Some(I(1)));
  EXPECT_EQ(nested.inner().inner(), I(1));
  EXPECT_NE(nested, Value::Some(I(1)));
  EXPECT_EQ(none.ToString(), "none");
  EXPECT_EQ(some.ToString(), "some(\"v\")");
  EXPECT_EQ(nested.ToString(), "some(some(1))");
}

TEST(ValueTest, SymOfConstantTermsFoldsToConcrete) {
  Value b = Value::Sym(sym::MkBool(true));
  EXPECT_TRUE(b.is_bool());
  EXPECT_TRUE(b.as_bool());
  Value f = Value::Sym(sym::MkBool(false));
  EXPECT_TRUE(f.is_bool());
  EXPECT_FALSE(f.as_bool());
  Value i = Value::Sym(sym::MkInt(-42));
  EXPECT_TRUE(i.is_int());
  EXPECT_EQ(i.as_int(), -42);
  Value s = Value::Sym(sym::MkString("etag"));
  EXPECT_TRUE(s.is_string());
  EXPECT_EQ(s.as_string(), "etag");
  // Constant folding through the smart constructors also yields concrete values.
  Value folded = Value::Sym(sym::MkConcat(sym::MkString("a"), sym::MkString("b")));
  EXPECT_EQ(folded, S("ab"));
  EXPECT_TRUE(folded.IsConcrete());
  Value len = Value::Sym(sym::MkLen(sym::MkString("four")));
  EXPECT_EQ(len, I(4));
}

TEST(ValueTest, SymOfVariableStaysSymbolic) {
  auto v = MkVar(Sort::kInt, 9, "n");
  Value x = Value::Sym(v);
  EXPECT_TRUE(x.is_sym());
  EXPECT_FALSE(x.IsConcrete());
  EXPECT_EQ(x.scalar_sort(), Sort::kInt);
  EXPECT_TRUE(sym::TermEqual(x.as_term(), v));
  EXPECT_TRUE(sym::TermEqual(x.ToTerm(), v));
  EXPECT_EQ(x.ToString(), "n#9");
}

TEST(ValueTest, ScalarSortAndToTerm) {
  EXPECT_EQ(Value::Bool(true).scalar_sort(), Sort::kBool);
  EXPECT_EQ(I(1).scalar_sort(), Sort::kInt);
  EXPECT_EQ(S("x").scalar_sort(), Sort::kString);
  EXPECT_EQ(Value::Null().scalar_sort(), std::nullopt);
  EXPECT_EQ(Value::List({}).scalar_sort(), std::nullopt);
  EXPECT_EQ(Value::None().scalar_sort(), std::nullopt);
  EXPECT_EQ(Value::Map({}).ToTerm(), nullptr);
  auto t = S("hi").ToTerm();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->op, sym::TermOp::kConstString);
  EXPECT_EQ(t->sval, "hi");
  EXPECT_EQ(I(7).ToTerm()->ival, 7);
  EXPECT_EQ(Value::Bool(true).ToTerm()->ival, 1);
}

TEST(ValueTest, IsConcreteLooksInsideContainers) {
  Value sym = Value::Sym(MkVar(Sort::kString, 1, "e"));
  EXPECT_TRUE(Value::Map({{"a", Value::List({I(1), Value::Some(S("x"))})}}).IsConcrete());
  EXPECT_FALSE(Value::List({I(1), sym}).IsConcrete());
  EXPECT_FALSE(Value::Map({{"a", Value::Map({{"b", sym}})}}).IsConcrete());
  EXPECT_FALSE(Value::Some(sym).IsConcrete());
  EXPECT_TRUE(Value::None().IsConcrete());
}

TEST(ValueTest, SubstituteValueReplacesBoundVariables) {
  auto e = MkVar(Sort::kString, 1, "etag");
  auto n = MkVar(Sort::kInt, 2, "n");
  auto other = MkVar(Sort::kString, 3, "other");
  Value v = Value::Map({
      {"etag", Value::Sym(e)},
      {"quoted", Value::Sym(sym::MkConcat(sym::MkString("\""), e))},
      {"len", Value::Sym(sym::MkAdd(sym::MkLen(e), n))},
      {"list", Value::List({Value::Sym(n), I(5)})},
      {"opt", Value::Some(Value::Sym(e))},
      {"free", Value::Sym(other)},
      {"plain", S("x")},
  });
  sym::Bindings b;
  b[1] = sym::MkString("abc");
  b[2] = sym::MkInt(10);
  Value out = SubstituteValue(v, b);
  EXPECT_EQ(*out.Find("etag"), S("abc"));
  EXPECT_EQ(*out.Find("quoted"), S("\"abc"));
  EXPECT_EQ(*out.Find("len"), I(13));
  EXPECT_EQ(*out.Find("list"), Value::List({I(10), I(5)}));
  EXPECT_EQ(*out.Find("opt"), Value::Some(S("abc")));
  EXPECT_EQ(*out.Find("plain"), S("x"));
  // Unbound variables stay symbolic.
  ASSERT_TRUE(out.Find("free")->is_sym());
  EXPECT_TRUE(sym::TermEqual(out.Find("free")->as_term(), other));
  EXPECT_FALSE(out.IsConcrete());
  // Binding it too makes the whole value concrete.
  b[3] = sym::MkString("o");
  Value all = SubstituteValue(v, b);
  EXPECT_TRUE(all.IsConcrete());
  EXPECT_EQ(*all.Find("free"), S("o"));
  // The input is unchanged.
  EXPECT_TRUE(v.Find("etag")->is_sym());
}

TEST(ValueTest, SubstituteValueOnConcreteIsIdentity) {
  Value v = *ParseJson(R"({"a":[1,2,{"b":"c"}]})");
  sym::Bindings b;
  b[1] = sym::MkString("abc");
  Value out = SubstituteValue(v, b);
  EXPECT_EQ(out, v);
  EXPECT_EQ(&out.as_map(), &v.as_map());  // shared, not copied
  EXPECT_EQ(SubstituteValue(Value::None(), b), Value::None());
}

TEST(ValueTest, SubstituteValueFoldsBooleanConditions) {
  auto e = MkVar(Sort::kString, 4, "e");
  Value cond = Value::Sym(sym::MkPrefixOf(sym::MkString("W/"), e));
  sym::Bindings weak, strong;
  weak[4] = sym::MkString("W/\"x\"");
  strong[4] = sym::MkString("\"x\"");
  EXPECT_EQ(SubstituteValue(cond, weak), Value::Bool(true));
  EXPECT_EQ(SubstituteValue(cond, strong), Value::Bool(false));
}

TEST(ValueTest, CollectValueVarsIsDistinct) {
  auto e = MkVar(Sort::kString, 1, "e");
  auto n = MkVar(Sort::kInt, 2, "n");
  Value v = Value::List(
      {Value::Sym(e), Value::Map({{"k", Value::Sym(sym::MkConcat(e, e))}}), Value::Some(Value::Sym(n)), I(1)});
  std::vector<sym::TermRef> vars;
  CollectValueVars(v, &vars);
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0]->ival, 1);
  EXPECT_EQ(vars[1]->ival, 2);
}

TEST(ValueTest, ToStringForms) {
  Value v = Value::Map(
      {{"a", Value::List({I(1), Value::Bool(true), Value::Null()})}, {"b", S("q\"x")}, {"c", Value::None()}});
  EXPECT_EQ(v.ToString(), R"({"a":[1,true,null],"b":"q\"x","c":none})");
}

TEST(ValueTest, KindNames) {
  EXPECT_STREQ(Value::KindName(Value::Kind::kNull), "null");
  EXPECT_STREQ(Value::KindName(Value::Kind::kMap), "map");
  EXPECT_STREQ(Value::KindName(Value::Kind::kOption), "option");
  EXPECT_STREQ(Value::KindName(Value::Kind::kSym), "symbolic");
}

}  // namespace
}  // namespace dualswarm::ir
