// Unit tests for engine/ir/json: ParseJson / ToJson round trips, string
// escapes (including \u and surrogate pairs), 64-bit integer bounds, the
// refusal of floats, "line:col" error positions, the nesting limit and
// trailing garbage.
#include "engine/ir/json.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/value.h"
#include "engine/sym/term.h"
#include "gtest/gtest.h"

namespace dualswarm::ir {
namespace {

Value MustParse(const std::string& text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text << " -> " << v.status();
  return v.ok() ? *v : Value::Null();
}

// Returns the error message; fails the test when parsing succeeds.
std::string ParseError(const std::string& text) {
  auto v = ParseJson(text);
  EXPECT_FALSE(v.ok()) << "expected an error for: " << text.substr(0, 80);
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << v.status();
  return std::string(v.status().message());
}

TEST(JsonTest, ScalarsParse) {
  EXPECT_TRUE(MustParse("null").is_null());
  EXPECT_EQ(MustParse("true"), Value::Bool(true));
  EXPECT_EQ(MustParse("false"), Value::Bool(false));
  EXPECT_EQ(MustParse("0"), Value::Int(0));
  EXPECT_EQ(MustParse("-0"), Value::Int(0));
  EXPECT_EQ(MustParse("42"), Value::Int(42));
  EXPECT_EQ(MustParse("-17"), Value::Int(-17));
  EXPECT_EQ(MustParse("\"hi\""), Value::String("hi"));
  EXPECT_EQ(MustParse("\"\""), Value::String(""));
}

TEST(JsonTest, SurroundingWhitespaceIsAllowed) {
  EXPECT_EQ(MustParse(" \t\r\n 7 \n\t "), Value::Int(7));
  EXPECT_EQ(MustParse("\n[ 1 ,\n 2 ]\r\n"), Value::List({Value::Int(1), Value::Int(2)}));
}

TEST(JsonTest, ContainersParse) {
  Value v = MustParse(R"({"b": [1, "x", null, true], "a": {"c": {}}, "d": []})");
  ASSERT_TRUE(v.is_map());
  ASSERT_EQ(v.as_map().size(), 3u);
  // Keys are kept sorted.
  EXPECT_EQ(v.as_map()[0].first, "a");
  EXPECT_EQ(v.as_map()[1].first, "b");
  EXPECT_EQ(v.as_map()[2].first, "d");
  const Value* b = v.Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, Value::List({Value::Int(1), Value::String("x"), Value::Null(), Value::Bool(true)}));
  const Value* a = v.Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->Find("c"), nullptr);
  EXPECT_EQ(*a->Find("c"), Value::Map({}));
  EXPECT_EQ(*v.Find("d"), Value::List({}));
}

TEST(JsonTest, DuplicateKeysLastWins) {
  Value v = MustParse(R"({"k": 1, "k": 2})");
  ASSERT_EQ(v.as_map().size(), 1u);
  EXPECT_EQ(*v.Find("k"), Value::Int(2));
}

TEST(JsonTest, ToJsonIsCompactAndSorted) {
  Value v =
      Value::Map({{"z", Value::Int(1)}, {"a", Value::List({Value::Bool(false), Value::Null(), Value::String("s")})}});
  EXPECT_EQ(ToJson(v), R"({"a":[false,null,"s"],"z":1})");
  EXPECT_EQ(ToJson(Value::Map({})), "{}");
  EXPECT_EQ(ToJson(Value::List({})), "[]");
  EXPECT_EQ(ToJson(Value::Int(-5)), "-5");
}

TEST(JsonTest, ToJsonPrintsOptionsAsNullOrInner) {
  EXPECT_EQ(ToJson(Value::None()), "null");
  EXPECT_EQ(ToJson(Value::Some(Value::Int(3))), "3");
  EXPECT_EQ(ToJson(Value::Some(Value::String("x"))), "\"x\"");
}

TEST(JsonTest, ToJsonPrintsSymbolicTermsAsStrings) {
  Value v = Value::Sym(sym::MkVar(sym::Sort::kString, 3, "etag"));
  ASSERT_TRUE(v.is_sym());
  EXPECT_EQ(ToJson(v), "\"etag#3\"");
}

TEST(JsonTest, RoundTrips) {
  const char* docs[] = {
      "null",
      "true",
      "-9223372036854775808",
      "9223372036854775807",
      R"("a\"b\\c\nd\re\tf")",
      R"({"a":[1,2,{"b":null}],"c":"d"})",
      R"([[],{},[[[]]],""])",
      R"({"\u0001":"\u001f"})",
      "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"",  // raw UTF-8 passes through
  };
  for (const char* d : docs) {
    Value v = MustParse(d);
    std::string out = ToJson(v);
    EXPECT_EQ(out, d) << "round trip changed the text";
    Value again = MustParse(out);
    EXPECT_EQ(again, v) << d;
  }
}

TEST(JsonTest, RoundTripOfEveryByteString) {
  std::string all;
  for (int c = 1; c < 256; ++c) all.push_back(static_cast<char>(c));
  Value v = Value::String(all);
  std::string json = ToJson(v);
  auto back = ParseJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->as_string(), all);
}

TEST(JsonTest, SimpleEscapes) { EXPECT_EQ(MustParse(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t"); }

TEST(JsonTest, UnicodeEscapes) {
  EXPECT_EQ(MustParse(R"("\u0041")").as_string(), "A");
  EXPECT_EQ(MustParse(R"("\u00e9")").as_string(), "\xC3\xA9");      // é
  EXPECT_EQ(MustParse(R"("\u00E9")").as_string(), "\xC3\xA9");      // upper-case hex
  EXPECT_EQ(MustParse(R"("\u20AC")").as_string(), "\xE2\x82\xAC");  // €
  EXPECT_EQ(MustParse(R"("\u07FF")").as_string(), "\xDF\xBF");      // 2-byte maximum
  EXPECT_EQ(MustParse(R"("\u0800")").as_string(), "\xE0\xA0\x80");  // 3-byte minimum
  EXPECT_EQ(MustParse(R"("\uFFFF")").as_string(), "\xEF\xBF\xBF");
  // \u0000 decodes to a real NUL byte inside the string.
  Value nul = MustParse(R"("a\u0000b")");
  EXPECT_EQ(nul.as_string(), std::string("a\0b", 3));
  EXPECT_EQ(ToJson(nul), R"("a\u0000b")");
}

TEST(JsonTest, SurrogatePairs) {
  // U+1F600 GRINNING FACE = \uD83D\uDE00.
  EXPECT_EQ(MustParse(R"("\uD83D\uDE00")").as_string(), "\xF0\x9F\x98\x80");
  // U+10000 (smallest) and U+10FFFF (largest).
  EXPECT_EQ(MustParse(R"("\uD800\uDC00")").as_string(), "\xF0\x90\x80\x80");
  EXPECT_EQ(MustParse(R"("\uDBFF\uDFFF")").as_string(), "\xF4\x8F\xBF\xBF");
  // Lower-case hex in both halves.
  EXPECT_EQ(MustParse(R"("x\ud83d\ude00y")").as_string(), "x\xF0\x9F\x98\x80y");
}

TEST(JsonTest, BadSurrogatesAreRejected) {
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\uD83D")"), "surrogate"));
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\uD83Dx")"), "surrogate"));
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\uD83D\u0041")"), "surrogate"));
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\uD83D\uD83D")"), "surrogate"));
}

TEST(JsonTest, LoneLowSurrogateIsRejected) {
  // A low surrogate with no high surrogate before it is not a character;
  // accepting it would put invalid UTF-8 (ED B0 80) into the IR.
  std::string msg = ParseError(R"("\uDC00")");
  EXPECT_TRUE(absl::StrContains(msg, "surrogate")) << msg;
  // The error points at the escape.
  EXPECT_EQ(ParseError(R"(["ab\uDFFF"])"), "1:5: unpaired low surrogate");
}

TEST(JsonTest, BadEscapesAreRejected) {
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\x41")"), "invalid escape"));
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\u12G4")"), "hex"));
  EXPECT_TRUE(absl::StrContains(ParseError(R"("\u12")"), "\\u"));
  EXPECT_FALSE(ParseJson("\"abc\\").ok());
}

TEST(JsonTest, ControlCharactersMustBeEscaped) {
  std::string msg = ParseError("\"a\nb\"");
  EXPECT_TRUE(absl::StrContains(msg, "control character")) << msg;
  EXPECT_FALSE(ParseJson(std::string("\"a\tb\"")).ok());
  EXPECT_FALSE(ParseJson(std::string("\"a\0b\"", 5)).ok());
}

TEST(JsonTest, Int64Bounds) {
  EXPECT_EQ(MustParse("9223372036854775807").as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(MustParse("-9223372036854775808").as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(absl::StrContains(ParseError("9223372036854775808"), "out of 64-bit range"));
  EXPECT_TRUE(absl::StrContains(ParseError("-9223372036854775809"), "out of 64-bit range"));
  EXPECT_TRUE(absl::StrContains(ParseError("18446744073709551615"), "out of 64-bit range"));
  EXPECT_TRUE(absl::StrContains(ParseError("18446744073709551616"), "out of 64-bit range"));
  EXPECT_TRUE(absl::StrContains(ParseError("99999999999999999999999999"), "out of 64-bit range"));
  // The position of an out-of-range number is its first character.
  EXPECT_TRUE(absl::StartsWith(ParseError("[1, 9223372036854775808]"), "1:5: "));
}

TEST(JsonTest, FloatsAreRefused) {
  for (const char* f : {"1.5", "-0.0", "1e3", "1E3", "2.0e-1", "[1, 2.5]", R"({"t": 1.0})"}) {
    std::string msg = ParseError(f);
    EXPECT_TRUE(absl::StrContains(msg, "integers only")) << f << ": " << msg;
  }
}

TEST(JsonTest, MalformedNumbers) {
  EXPECT_FALSE(ParseJson("-").ok());
  EXPECT_FALSE(ParseJson("+1").ok());
  EXPECT_FALSE(ParseJson("--1").ok());
  EXPECT_FALSE(ParseJson(".5").ok());
  EXPECT_FALSE(ParseJson("0x10").ok());
}

TEST(JsonTest, LeadingZerosAreRejected) {
  // RFC 8259: "leading zeros are not allowed"; "01" is not a JSON number.
  EXPECT_FALSE(ParseJson("01").ok());
  EXPECT_FALSE(ParseJson("-007").ok());
  EXPECT_FALSE(ParseJson("[00]").ok());
  EXPECT_EQ(ParseError("[1, 012]"), "1:5: leading zeros are not allowed in numbers");
  // A lone zero, and zeros after the first digit, are fine.
  EXPECT_EQ(MustParse("[0, -0, 100]"), Value::List({Value::Int(0), Value::Int(0), Value::Int(100)}));
}

TEST(JsonTest, ErrorPositionSingleLine) {
  EXPECT_EQ(ParseError("[1, 2,, 3]"), "1:7: unexpected character ',', expected a value");
  EXPECT_EQ(ParseError("[1 2]"), "1:4: expected ',' or ']' in array");
  EXPECT_EQ(ParseError("{\"a\" 1}"), "1:6: expected ':' after key");
  EXPECT_EQ(ParseError("{a: 1}"), "1:2: expected a string key");
  EXPECT_EQ(ParseError("nul"), "1:1: invalid literal");
  EXPECT_EQ(ParseError("[tru]"), "1:2: invalid literal");
}

TEST(JsonTest, ErrorPositionMultiLine) {
  // The error is the ':' missing after "b" on line 3, column 8.
  // Line 3 is `  "b"  2`; the '2' is at column 8.
  std::string text = "{\n  \"a\": 1,\n  \"b\"  2\n}";
  EXPECT_EQ(ParseError(text), "3:8: expected ':' after key");
  // A bad value on line 4, column 5.
  std::string text2 = "[\n1,\n2,\n    @\n]";
  EXPECT_EQ(ParseError(text2), "4:5: unexpected character '@', expected a value");
  // An error right after a newline is at column 1.
  EXPECT_EQ(ParseError("[1,\n]"), "2:1: unexpected character ']', expected a value");
}

TEST(JsonTest, ErrorAtEndOfInput) {
  EXPECT_EQ(ParseError(""), "1:1: unexpected end of input, expected a value");
  EXPECT_EQ(ParseError("   "), "1:4: unexpected end of input, expected a value");
  EXPECT_EQ(ParseError("[1,"), "1:4: unexpected end of input, expected a value");
  EXPECT_EQ(ParseError("[1"), "1:3: unterminated array, expected ',' or ']'");
  EXPECT_EQ(ParseError("{\"a\":1"), "1:7: unterminated object, expected ',' or '}'");
  EXPECT_EQ(ParseError("\"abc"), "1:5: unterminated string");
  EXPECT_EQ(ParseError("{\n\"k\":\n\"v"), "3:3: unterminated string");
}

TEST(JsonTest, TrailingGarbageIsRejected) {
  EXPECT_EQ(ParseError("1 2"), "1:3: unexpected text after the JSON value");
  EXPECT_EQ(ParseError("{} x"), "1:4: unexpected text after the JSON value");
  EXPECT_EQ(ParseError("[1]]"), "1:4: unexpected text after the JSON value");
  EXPECT_EQ(ParseError("true\nfalse"), "2:1: unexpected text after the JSON value");
  EXPECT_EQ(ParseError("nullx"), "1:5: unexpected text after the JSON value");
  EXPECT_EQ(ParseError("\"a\"\"b\""), "1:4: unexpected text after the JSON value");
}

std::string Nested(int depth, const std::string& inner) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += '[';
  s += inner;
  for (int i = 0; i < depth; ++i) s += ']';
  return s;
}

std::string NestedObjects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"k\":";
  s += "1";
  for (int i = 0; i < depth; ++i) s += '}';
  return s;
}

TEST(JsonTest, NestingUpToTheLimitIsAccepted) {
  Value v = MustParse(Nested(256, "1"));
  int depth = 0;
  const Value* cur = &v;
  while (cur->is_list()) {
    ++depth;
    ASSERT_EQ(cur->as_list().size(), 1u);
    cur = &cur->as_list()[0];
  }
  EXPECT_EQ(depth, 256);
  EXPECT_EQ(*cur, Value::Int(1));
  EXPECT_TRUE(ParseJson(Nested(256, "")).ok());
  EXPECT_TRUE(ParseJson(NestedObjects(256)).ok());
  // The round trip of a deep value works too.
  EXPECT_EQ(ToJson(v), Nested(256, "1"));
}

TEST(JsonTest, NestingBeyondTheLimitIsRejected) {
  for (const std::string& text : {Nested(257, "1"), Nested(258, ""), NestedObjects(257), Nested(100000, "")}) {
    std::string msg = ParseError(text);
    EXPECT_TRUE(absl::StrContains(msg, "nesting deeper than 256")) << msg.substr(0, 200);
  }
}

TEST(JsonTest, NestingLimitCountsEmptyInnermostContainer) {
  // 257 levels of arrays are 257 levels whether or not the innermost one is empty.
  std::string msg = ParseError(Nested(257, ""));
  EXPECT_TRUE(absl::StrContains(msg, "nesting deeper than 256")) << msg;
  std::string msg2 = ParseError(Nested(256, "{}"));
  EXPECT_TRUE(absl::StrContains(msg2, "nesting deeper than 256")) << msg2;
}

TEST(JsonTest, AppendJsonStringEscapes) {
  std::string out = "x=";
  AppendJsonString("q\"b\\n\n\x01\x7f", &out);
  EXPECT_EQ(out, "x=\"q\\\"b\\\\n\\n\\u0001\x7f\"");
}

}  // namespace
}  // namespace dualswarm::ir
