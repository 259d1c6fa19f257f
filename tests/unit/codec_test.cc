// HTTP/1.1 and JSON-lines framing: requests out, responses in, and garbage
// turned into a "malformed" response instead of a crash.
#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

std::vector<Value> Decode(Codec& c, std::string bytes, bool eof, bool* close) {
  std::vector<Value> out;
  *close = false;
  c.Decode(&bytes, eof, &out, close);
  return out;
}

TEST(HttpCodec, EncodesRequestsWithLengthOrChunks) {
  auto c = MakeHttpCodec("127.0.0.1:80");
  Value put = *ir::ParseJson(R"({"method":"PUT","path":"/a","headers":{"If-Match":"\"x\""},"body":"hello"})");
  auto a = c->Encode(put);
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->find("PUT /a HTTP/1.1\r\n"), std::string::npos);
  EXPECT_NE(a->find("if-match: \"x\"\r\n"), std::string::npos);
  EXPECT_NE(a->find("content-length: 5\r\n\r\nhello"), std::string::npos);
  c->Encode(put);
  auto third = c->Encode(put);  // every third body goes chunked
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->find("transfer-encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n"), std::string::npos) << *third;
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/a b"})")).ok());
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/a","headers":{"x":"a\r\nb"}})")).ok());
}

TEST(HttpCodec, DecodesLengthChunkedInterimAndPipelined) {
  auto c = MakeHttpCodec("h");
  bool close;
  auto out = Decode(*c,
                    "HTTP/1.1 100 Continue\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nETag: \"t\"\r\nContent-Length: 3\r\n\r\nabc"
                    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n1\r\nz\r\n0\r\n\r\n"
                    "HTTP/1.1 304 Not Modified\r\nETag: \"t\"\r\n\r\n",
                    false, &close);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(ir::ToJson(out[0]), R"({"body":"abc","headers":{"content-length":"3","etag":"\"t\""},"status":200})");
  EXPECT_EQ(out[1].Find("body")->as_string(), "xyz");
  EXPECT_EQ(out[2].Find("status")->as_int(), 304);
  EXPECT_FALSE(close);
}

TEST(HttpCodec, PartialResponsesWaitForMoreBytes) {
  auto c = MakeHttpCodec("h");
  std::string buf = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";
  std::vector<Value> out;
  bool close = false;
  c->Decode(&buf, false, &out, &close);
  EXPECT_TRUE(out.empty());
  buf += "cde";
  c->Decode(&buf, false, &out, &close);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].Find("body")->as_string(), "abcde");
}

TEST(HttpCodec, GarbageBecomesAMalformedResponse) {
  for (const char* bytes : {"garbage\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                            "HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n",
                            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    auto c = MakeHttpCodec("h");
    bool close;
    auto out = Decode(*c, bytes, false, &close);
    ASSERT_EQ(out.size(), 1u) << bytes;
    EXPECT_NE(out[0].Find("malformed"), nullptr) << bytes;
    EXPECT_TRUE(close) << bytes;
  }
  // A response cut off by the peer closing.
  auto c = MakeHttpCodec("h");
  bool close;
  auto out = Decode(*c, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", true, &close);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].Find("malformed"), nullptr);
  // Close-delimited bodies end at EOF.
  auto d = MakeHttpCodec("h");
  auto body = Decode(*d, "HTTP/1.0 200 OK\r\n\r\nuntil close", true, &close);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0].Find("body")->as_string(), "until close");
}

TEST(JsonLinesCodec, LinesInAndOut) {
  auto c = MakeJsonLinesCodec();
  auto e = c->Encode(*ir::ParseJson(R"({"op":"get","key":"a"})"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "{\"key\":\"a\",\"op\":\"get\"}\n");
  bool close;
  auto out = Decode(*c, "{\"value\":null}\r\nnot json\n{\"ok\":tr", false, &close);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].Find("value")->is_null());
  EXPECT_NE(out[1].Find("malformed"), nullptr);
  EXPECT_FALSE(close);
}

}  // namespace
}  // namespace dualswarm::workers
