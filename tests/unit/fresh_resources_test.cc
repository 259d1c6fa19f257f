// Shrinking candidates renamed to fresh partitions (engine/harness/
// fresh_resources.h): which inputs can be, that partitions stay what they
// were, and that the names come back.
#include <string>
#include <vector>

#include "engine/harness/fresh_resources.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

InputItem Kv(const std::string& op, const std::string& key) {
  InputItem i;
  i.jexpr = Value::Map({{"op", Value::String(op)}, {"key", Value::String(key)}});
  return i;
}

std::string KeyOf(const InputItem& i) { return i.jexpr.Find("key")->as_string(); }

TEST(FreshResources, EachRunGetsItsOwnKeysAndTheNamesComeBack) {
  auto spec = Shipped("kv.dspec");
  const std::vector<InputItem> input = {Kv("put", "a"), Kv("get", "b"), Kv("get", "a")};
  auto first = WithFreshResources(input, *spec, "7");
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(KeyOf((*first)[0]), "a~w7");
  EXPECT_EQ(KeyOf((*first)[1]), "b~w7");
  EXPECT_EQ(KeyOf((*first)[2]), "a~w7");
  EXPECT_EQ((*first)[0].jexpr.Find("op")->as_string(), "put");  // the rest as it was
  // A renamed input renamed again replaces the suffix; the user's names come back.
  auto second = WithFreshResources(*first, *spec, "8");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(KeyOf((*second)[0]), "a~w8");
  const std::vector<InputItem> back = WithoutFreshSuffixes(*second);
  ASSERT_EQ(back.size(), 3u);
  for (size_t k = 0; k < back.size(); ++k) EXPECT_EQ(back[k].jexpr, input[k].jexpr);
  // A key that only looks renamed keeps what is not a suffix, and a user's
  // key that looks renamed is told apart (shrinking then does not rename).
  EXPECT_EQ(KeyOf(WithoutFreshSuffixes({Kv("get", "x~wy")})[0]), "x~wy");
  EXPECT_EQ(KeyOf((*WithFreshResources({Kv("get", "x~wy")}, *spec, "3"))[0]), "x~wy~w3");
  EXPECT_FALSE(HasFreshSuffixes(input));
  EXPECT_TRUE(HasFreshSuffixes(*first));
  EXPECT_TRUE(HasFreshSuffixes({Kv("get", "a~w12")}));
  EXPECT_FALSE(HasFreshSuffixes({Kv("get", "a~w"), Kv("get", "a~wb")}));
}

TEST(FreshResources, PathsOfHttpRequests) {
  auto spec = Shipped("http_webdav.dspec");
  InputItem put;
  put.jexpr = Value::Map({{"method", Value::String("PUT")},
                          {"path", Value::String("/a")},
                          {"headers", Value::Map({})},
                          {"body", Value::String("x")}});
  auto fresh = WithFreshResources({put}, *spec, "12");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ((*fresh)[0].jexpr.Find("path")->as_string(), "/a~w12");
  // A suffix after a query or fragment, or after a collection's "/", would
  // not name another resource; nor may a name grow past 200 bytes.
  for (const std::string& path : std::vector<std::string>{"/a?x=1", "/a#top", "/dir/", std::string(190, 'p')}) {
    put.jexpr = put.jexpr.Set("path", Value::String(path));
    EXPECT_FALSE(WithFreshResources({put}, *spec, "12").has_value()) << path;
  }
}

// Where the rename could not promise fresh partitions, there is none.
TEST(FreshResources, NoRenameWithoutAPartitionOrALiteralResource) {
  // No partition: a queue is one state.
  InputItem enq;
  enq.jexpr = Value::Map({{"op", Value::String("enq")}, {"value", Value::String("v")}});
  EXPECT_FALSE(WithFreshResources({enq}, *Shipped("queue.dspec"), "1").has_value());
  auto kv = Shipped("kv.dspec");
  // A request without a key, or whose key is a reference to a response.
  EXPECT_FALSE(WithFreshResources({Kv("get", "a"), enq}, *kv, "1").has_value());
  InputItem ref = Kv("get", "a");
  ref.jexpr = ref.jexpr.Set("key", Value::Map({{"$ref", Value::String("2.value")}}));
  EXPECT_FALSE(WithFreshResources({ref}, *kv, "1").has_value());
  // A fault item (a kill) is no request.
  InputItem kill;
  kill.fault = Value::Map({{"fault", Value::String("kill")}, {"node", Value::Int(0)}});
  EXPECT_FALSE(WithFreshResources({Kv("get", "a"), kill}, *kv, "1").has_value());
  EXPECT_FALSE(WithFreshResources({Kv("get", "a")}, *kv, "").has_value());  // no token
}

}  // namespace
}  // namespace dualswarm::harness
