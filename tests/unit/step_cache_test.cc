// The step cache (engine/check/step_cache.h): a step is found only under an
// equal state (compared by value), the same request and the same `fresh`
// counter; memory is bounded by entries and by the value nodes of the
// states it keeps; a cache that rarely hits stops looking up for a while.
#include "engine/check/step_cache.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace dualswarm::check {
namespace {

using ir::Value;
using Globals = std::shared_ptr<const std::vector<Value>>;

Globals State(std::vector<Value> v) { return std::make_shared<const std::vector<Value>>(std::move(v)); }

std::shared_ptr<const StepOutcomes> OneOutcome(Globals after) {
  auto o = std::make_shared<StepOutcomes>();
  o->push_back(StepOutcome{std::move(after), {}, {}, 0, false});
  return o;
}

TEST(StepCache, FindsOnlyTheSameStepFromAnEqualState) {
  StepCache cache(100, 1'000'000);
  Globals s = State({Value::String("a")});
  cache.Insert(s, 2, 7, 0, OneOutcome(State({Value::String("b")})));
  // An equal state in another vector is found; anything else that differs is not.
  EXPECT_NE(cache.Find(State({Value::String("a")}), 2, 7, 0), nullptr);
  EXPECT_EQ(cache.Find(State({Value::String("x")}), 2, 7, 0), nullptr);
  EXPECT_EQ(cache.Find(s, 3, 7, 0), nullptr);
  EXPECT_EQ(cache.Find(s, 2, 8, 0), nullptr);
  EXPECT_EQ(cache.Find(s, 2, 7, 1), nullptr);
}

TEST(StepCache, ForgetsPastItsEntryAndNodeBounds) {
  StepCache by_entries(2, 1'000'000);
  for (int i = 0; i < 3; ++i) by_entries.Insert(State({Value::Int(i)}), 0, i, 0, OneOutcome(State({Value::Int(i)})));
  EXPECT_EQ(by_entries.resets(), 1u);
  EXPECT_EQ(by_entries.size(), 1u);

  // A state of 1 + 1,000 nodes per outcome: the third passes 2,500.
  std::vector<Value> items(1000, Value::Int(1));
  Globals big = State({Value::List(items)});
  StepCache by_nodes(100, 2'500);
  for (int i = 0; i < 3; ++i) by_nodes.Insert(State({Value::Int(i)}), 0, i, 0, OneOutcome(big));
  EXPECT_EQ(by_nodes.resets(), 1u);
  EXPECT_EQ(by_nodes.size(), 1u);
}

TEST(StepCache, SitsOutAfterAWindowOfFewHits) {
  StepCache cache(1'000'000, 1'000'000'000);
  Globals s = State({Value::Int(0)});
  int lookups = 0;
  while (cache.Active() && lookups < 100'000) {
    cache.Find(s, 0, lookups, 0);  // every lookup misses
    ++lookups;
  }
  EXPECT_EQ(lookups, 4096) << "one window of misses";
  int sat_out = 1;  // the Active() that ended the loop
  while (!cache.Active()) ++sat_out;
  EXPECT_EQ(sat_out, 65536);
  // A cache that hits keeps looking up.
  cache.Insert(s, 0, 0, 0, OneOutcome(s));
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_TRUE(cache.Active()) << i;
    ASSERT_NE(cache.Find(s, 0, 0, 0), nullptr);
  }
}

// The lookup that closes a window of few hits may itself hit: what it
// returns stays valid although the window's end empties the cache (it was
// read after the clear: a spec error "`send` to , which is not a
// connection" on a correct 8-connection queue history).
TEST(StepCache, AHitThatClosesAWindowStaysValid) {
  StepCache cache(1'000'000, 1'000'000'000);
  Globals s = State({Value::Int(0)});
  cache.Insert(s, 0, -1, 0, OneOutcome(State({Value::String("after")})));
  for (int i = 0; i < 4095; ++i) cache.Find(s, 0, i, 0);              // misses
  std::shared_ptr<const StepOutcomes> hit = cache.Find(s, 0, -1, 0);  // the 4,096th lookup
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(cache.size(), 0u) << "the window of few hits emptied the cache";
  ASSERT_EQ(hit->size(), 1u);
  EXPECT_EQ((*(*hit)[0].globals)[0], Value::String("after"));
  EXPECT_FALSE(cache.Active());
}

// Forgotten outcomes are freed, small caches at once and large ones off
// the search's thread: none outlives the cache, however many batches were
// handed over.
TEST(StepCache, ForgottenOutcomesAreFreed) {
  std::vector<std::weak_ptr<const StepOutcomes>> small;
  {
    StepCache cache(2, 1'000'000);
    for (int i = 0; i < 9; ++i) {  // the 3rd, 5th, 7th and 9th insert find it full
      auto outcomes = OneOutcome(State({Value::Int(i)}));
      small.push_back(outcomes);
      cache.Insert(State({Value::Int(i)}), 0, i, 0, std::move(outcomes));
    }
    EXPECT_EQ(cache.resets(), 4u);
    EXPECT_TRUE(small.front().expired()) << "a small cache is freed at once";
    EXPECT_FALSE(small.back().expired()) << "the step inserted last is still cached";
  }
  for (size_t i = 0; i < small.size(); ++i) EXPECT_TRUE(small[i].expired()) << i;

  // Outcomes of 1,001 nodes each: 600 fill more than 500,000 nodes, so
  // each of the three resets hands them to another thread.
  std::vector<Value> items(1000, Value::Int(1));
  std::vector<std::weak_ptr<const StepOutcomes>> large;
  {
    StepCache cache(600, 1'000'000'000);
    for (int i = 0; i < 1801; ++i) {
      auto outcomes = OneOutcome(State({Value::List(items)}));
      large.push_back(outcomes);
      cache.Insert(State({Value::Int(i)}), 0, i, 0, std::move(outcomes));
    }
    EXPECT_EQ(cache.resets(), 3u);
  }
  for (size_t i = 0; i < large.size(); ++i) ASSERT_TRUE(large[i].expired()) << i;
}

}  // namespace
}  // namespace dualswarm::check
