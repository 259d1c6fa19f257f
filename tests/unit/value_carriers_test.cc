// ValueCarriers (engine/check/carriers.h): a value names the one request
// that carried it, never one of several, and never a short or absent one.
#include "engine/check/carriers.h"

#include <vector>

#include "gtest/gtest.h"

namespace dualswarm {
namespace {

using check::RequestRef;
using ir::Value;

Value Enq(const char* v) { return Value::Map({{"op", Value::String("enq")}, {"value", Value::String(v)}}); }
Value Item(const char* v) { return Value::Map({{"value", Value::String(v)}}); }

TEST(ValueCarriers, AValueNamesTheOneRequestThatCarriedIt) {
  check::ValueCarriers c;
  c.Note(Enq("e1"), 0, 0);
  c.Note(Enq("e2"), 1, 0);
  c.Note(Enq("e3"), 0, 1);
  EXPECT_EQ(c.CarriersOf(Item("e2")), (std::vector<RequestRef>{{1, 0}}));
  EXPECT_EQ(c.CarriersOf(Item("e3")), (std::vector<RequestRef>{{0, 1}}));
  // "enq" occurs in every request: it names none of them.
  EXPECT_TRUE(c.CarriersOf(Value::Map({{"op", Value::String("enq")}})).empty());
  EXPECT_TRUE(c.CarriersOf(Item("e9")).empty());
  EXPECT_TRUE(c.CarriersOf(Value::Map({{"value", Value::Null()}})).empty());
}

TEST(ValueCarriers, ValuesTwoRequestsCarryOrOneCharacterLongNameNone) {
  check::ValueCarriers c;
  c.Note(Enq("dup"), 0, 0);
  c.Note(Enq("dup"), 2, 3);
  c.Note(Enq("x"), 1, 0);
  EXPECT_TRUE(c.CarriersOf(Item("dup")).empty());
  EXPECT_TRUE(c.CarriersOf(Item("x")).empty());
  // The same request noted twice (a replay) still names itself.
  c.Note(Enq("once"), 4, 0);
  c.Note(Enq("once"), 4, 0);
  EXPECT_EQ(c.CarriersOf(Item("once")), (std::vector<RequestRef>{{4, 0}}));
}

TEST(ValueCarriers, NestedValuesCountAndEachCarrierIsNamedOnce) {
  check::ValueCarriers c;
  c.Note(Value::Map({{"batch", Value::List({Value::String("aa"), Value::String("bb")})}}), 0, 0);
  c.Note(Enq("cc"), 1, 0);
  const Value seen = Value::List({Item("bb"), Item("aa"), Item("cc")});
  EXPECT_EQ(c.CarriersOf(seen), (std::vector<RequestRef>{{0, 0}, {1, 0}}));
}

}  // namespace
}  // namespace dualswarm
