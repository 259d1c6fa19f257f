// The C++ library shim (shims/cpp/dualswarm_shim.h) without a socket: the
// answers Library::Answer gives to request lines — results and handles,
// exceptions, refusals (unknown op, bad handle, a handle of another type,
// wrong argument count or kind), integers at the edges of int64, \u
// escapes, and vectors of bool.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "shims/cpp/dualswarm_shim.h"

namespace {

struct Box {
  int64_t v = 0;
};
struct Other {};

void Register(dualswarm_shim::Library& lib) {
  lib.Type<Box>("box");
  lib.Type<Other>("other");
  lib.Op("box", [](int64_t v) { return Box{v}; });
  lib.Op("other", [] { return Other{}; });
  lib.Op("get", [](const Box& b) { return b.v; });
  lib.Op("fail", [](const Box&) -> int64_t { throw std::out_of_range("nothing here"); });
  lib.Op("odd", []() -> int64_t { throw 7; });
  lib.Op("echo", [](const std::string& s) { return s; });
  lib.Op("flags", [](int64_t n) { return std::vector<bool>(static_cast<size_t>(n), true); });
  lib.Op("maybe", [](bool b) { return b ? std::optional<int64_t>(1) : std::nullopt; });
  lib.Op("small", [](int v) { return v; });
}

TEST(LibraryShim, ResultsAndHandles) {
  dualswarm_shim::Library lib;
  Register(lib);
  EXPECT_EQ(lib.Answer(R"({"call":"box","args":[5]})"), R"({"ret":{"$box":0}})");
  EXPECT_EQ(lib.Answer(R"({"call":"get","args":[{"$box":0}],"law":{"name":"x"}})"), R"({"ret":5})");
  EXPECT_EQ(lib.Answer(R"({"call":"flags","args":[2]})"), R"({"ret":[true,true]})");
  EXPECT_EQ(lib.Answer(R"({"call":"maybe","args":[false]})"), R"({"ret":null})");
  EXPECT_EQ(lib.Answer(R"({"call":"echo","args":["a\u0041\n"]})"), R"({"ret":"aA\u000a"})");
}

TEST(LibraryShim, ExceptionsAreAnswers) {
  dualswarm_shim::Library lib;
  Register(lib);
  lib.Answer(R"({"call":"box","args":[1]})");
  EXPECT_EQ(lib.Answer(R"({"call":"fail","args":[{"$box":0}]})"), R"({"exn":"nothing here"})");
  EXPECT_EQ(lib.Answer(R"({"call":"odd","args":[]})"), R"({"exn":"an exception that is not a std::exception"})");
}

TEST(LibraryShim, RefusalsAreErrors) {
  dualswarm_shim::Library lib;
  Register(lib);
  lib.Answer(R"({"call":"box","args":[1]})");
  lib.Answer(R"({"call":"other","args":[]})");
  auto error = [&](const std::string& line, const std::string& want) {
    const std::string a = lib.Answer(line);
    EXPECT_EQ(a.rfind("{\"error\":", 0), 0u) << line << " -> " << a;
    EXPECT_NE(a.find(want), std::string::npos) << line << " -> " << a;
  };
  error(R"({"call":"nope","args":[]})", "unknown operation 'nope'");
  error(R"({"call":"get","args":[{"$box":9}]})", "unknown handle 9");
  error(R"({"call":"get","args":[{"$box":1}]})", "handle 1 is a other, not a box");
  error(R"({"call":"get","args":[]})", "takes 1 argument(s), got 0");
  error(R"({"call":"get","args":[3]})", "expected a handle");
  error(R"({"call":"box","args":["x"]})", "expected an integer");
  error(R"({"call":"small","args":[3000000000]})", "beyond int");
  error(R"(not json)", "expected {");
  error(R"({"call":"echo","args":["\u00zz"]})", "expected {");
}

TEST(LibraryShim, IntegersAtTheEdgesOfInt64) {
  dualswarm_shim::Library lib;
  Register(lib);
  EXPECT_EQ(lib.Answer(R"({"call":"box","args":[-9223372036854775808]})"), R"({"ret":{"$box":0}})");
  EXPECT_EQ(lib.Answer(R"({"call":"get","args":[{"$box":0}]})"), R"({"ret":-9223372036854775808})");
  EXPECT_EQ(lib.Answer(R"({"call":"box","args":[9223372036854775807]})"), R"({"ret":{"$box":1}})");
  EXPECT_EQ(lib.Answer(R"({"call":"get","args":[{"$box":1}]})"), R"({"ret":9223372036854775807})");
  for (const char* bad : {R"({"call":"box","args":[9223372036854775808]})", R"({"call":"box","args":[-]})",
                          R"({"call":"box","args":[1.5]})", R"({"call":"box","args":[1e3]})"})
    EXPECT_EQ(lib.Answer(bad).rfind("{\"error\":", 0), 0u) << bad;
}

}  // namespace
