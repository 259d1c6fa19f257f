// HTTP/1.1 and JSON-lines framing: requests out, responses in, garbage
// reported out of band (never inside the response, never a crash), bytes
// fed in any split decoded like bytes fed at once, and every buffer a
// server can fill bounded.
#include <string>
#include <vector>

#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "tests/unit/codec_pieces.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

TEST(HttpCodec, EncodesRequestsWithLengthOrChunks) {
  auto c = MakeHttpCodec("127.0.0.1:80");
  Value put = *ir::ParseJson(R"({"method":"PUT","path":"/a","headers":{"If-Match":"\"x\""},"body":"hello"})");
  auto a = c->Encode(put);
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->find("PUT /a HTTP/1.1\r\n"), std::string::npos);
  EXPECT_NE(a->find("if-match: \"x\"\r\n"), std::string::npos);
  EXPECT_NE(a->find("content-length: 5\r\n\r\nhello"), std::string::npos);
  (void)c->Encode(put);
  auto third = c->Encode(put);  // every third body goes chunked
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->find("transfer-encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n"), std::string::npos)
      << *third;
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/a b"})")).ok());
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/a","headers":{"x":"a\r\nb"}})")).ok());
}

TEST(HttpCodec, DecodesLengthChunkedInterimAndPipelined) {
  auto c = MakeHttpCodec("h");
  DecodeResult r;
  auto out = Decode(*c,
                    "HTTP/1.1 100 Continue\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nETag: \"t\"\r\nContent-Length: 3\r\n\r\nabc"
                    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n1;ext=1\r\nz\r\n0\r\n"
                    "X-Trailer: t\r\n\r\n"
                    "HTTP/1.1 304 Not Modified\r\nETag: \"t\"\r\n\r\n",
                    false, &r);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(ir::ToJson(out[0]), R"({"body":"abc","headers":{"content-length":"3","etag":"\"t\""},"status":200})");
  EXPECT_EQ(out[1].Find("body")->as_string(), "xyz");
  EXPECT_EQ(out[2].Find("status")->as_int(), 304);
  EXPECT_FALSE(r.close);
  EXPECT_EQ(r.malformed, "");
}

TEST(HttpCodec, RepeatedHeadersAreJoinedInOrder) {
  auto c = MakeHttpCodec("h");
  DecodeResult r;
  auto out = Decode(*c, "HTTP/1.1 200 OK\r\nVary: a\r\nContent-Length: 0\r\nvary:  b \r\n\r\n", false, &r);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].Find("headers")->Find("vary")->as_string(), "a, b");
}

TEST(HttpCodec, PartialResponsesWaitForMoreBytes) {
  auto c = MakeHttpCodec("h");
  std::string buf = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";
  std::vector<Value> out;
  c->Decode(&buf, false, &out);
  EXPECT_TRUE(out.empty());
  buf += "cde";
  c->Decode(&buf, false, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].Find("body")->as_string(), "abcde");
}

// Any split of the bytes gives what feeding them at once gives.
TEST(HttpCodec, EverySplitDecodesLikeTheWhole) {
  const std::string kStreams[] = {
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
      "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n1\r\nz\r\n0\r\nT: 1\r\n\r\n"
      "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.0 200 OK\r\n\r\nuntil close",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY",
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 2x0 OK\r\n\r\n",
      // Found by fuzz_codec: a bad start of a status line is named the same
      // whether the block's end has arrived or not.
      "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n 200 OK\r\nConth: 9\r\n\r\nabc",
  };
  auto proto = MakeHttpCodec("h");
  for (const std::string& bytes : kStreams) {
    std::string whole = DecodeInPieces(*proto, bytes, 0);
    for (size_t piece = 1; piece < bytes.size(); ++piece)
      ASSERT_EQ(DecodeInPieces(*proto, bytes, piece), whole) << "pieces of " << piece << " bytes of " << bytes;
  }
}

TEST(HttpCodec, GarbageIsReportedBesideTheResponses) {
  for (const char* bytes :
       {"garbage\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n"}) {
    auto c = MakeHttpCodec("h");
    DecodeResult r;
    auto out = Decode(*c, bytes, false, &r);
    EXPECT_TRUE(out.empty()) << bytes;
    EXPECT_NE(r.malformed, "") << bytes;
    EXPECT_TRUE(r.close) << bytes;
  }
  // A response cut off by the peer closing.
  auto c = MakeHttpCodec("h");
  DecodeResult r;
  auto out = Decode(*c, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", true, &r);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(r.malformed, "connection closed after 3 of 9 body bytes");
  // Close-delimited bodies end at EOF.
  auto d = MakeHttpCodec("h");
  auto body = Decode(*d, "HTTP/1.0 200 OK\r\n\r\nuntil close", true, &r);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0].Find("body")->as_string(), "until close");
  EXPECT_TRUE(r.close);
  EXPECT_EQ(r.malformed, "");
}

// Endless trailers (a hostile server) end at the trailer bound, after
// linear work: fed a line at a time, the codec keeps only the unfinished
// line.
TEST(HttpCodec, EndlessTrailersHitTheirBound) {
  auto c = MakeHttpCodec("h");
  std::string buf = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  std::vector<Value> out;
  DecodeResult r;
  int lines = 0;
  while (r.malformed.empty() && lines < 100000) {
    buf += "X-Trailer: 0123456789012345678901234567890123456789\r\n";
    ++lines;
    r = c->Decode(&buf, false, &out);
    ASSERT_LT(buf.size(), 100u);
  }
  EXPECT_TRUE(out.empty());
  EXPECT_NE(r.malformed.find("trailer section larger than 65536 bytes"), std::string::npos) << r.malformed;
  EXPECT_LT(lines, 2000);
}

TEST(HttpCodec, OversizedPartsNameTheirBound) {
  struct Case {
    std::string bytes;
    const char* bound;
  };
  const Case kCases[] = {
      {"HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a'), "response header block larger than 65536 bytes"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(2000, '0'),
       "chunk-size line longer than 1024 bytes"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000001\r\n", "chunked body larger than 16777216 bytes"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 16777217\r\n\r\n", "exceeds the 16777216-byte body bound"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad content-length"},
  };
  for (const Case& k : kCases) {
    auto c = MakeHttpCodec("h");
    DecodeResult r;
    Decode(*c, k.bytes, false, &r);
    EXPECT_NE(r.malformed.find(k.bound), std::string::npos) << r.malformed;
  }
}

TEST(JsonLinesCodec, LinesInAndOut) {
  auto c = MakeJsonLinesCodec();
  auto e = c->Encode(*ir::ParseJson(R"({"op":"get","key":"a"})"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "{\"key\":\"a\",\"op\":\"get\"}\n");
  DecodeResult r;
  auto out = Decode(*c, "{\"value\":null}\r\n\n{\"ok\":tr", false, &r);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].Find("value")->is_null());
  EXPECT_EQ(r.malformed, "");
  EXPECT_FALSE(r.close);
}

TEST(JsonLinesCodec, GarbageIsReportedBesideTheResponses) {
  auto c = MakeJsonLinesCodec();
  DecodeResult r;
  auto out = Decode(*c, "{\"value\":null}\nnot json\n{\"ok\":true}\n", false, &r);
  ASSERT_EQ(out.size(), 1u);  // the line before the garbage
  EXPECT_NE(r.malformed.find("not JSON"), std::string::npos) << r.malformed;
  EXPECT_NE(r.malformed.find("\"not json\""), std::string::npos) << r.malformed;
  EXPECT_TRUE(r.close);
  auto d = MakeJsonLinesCodec();
  Decode(*d, "{\"ok\":tr", true, &r);
  EXPECT_NE(r.malformed.find("connection closed inside a line"), std::string::npos) << r.malformed;
}

// A response may carry any field: one named "malformed" is data.
TEST(JsonLinesCodec, AFieldNamedMalformedIsData) {
  auto c = MakeJsonLinesCodec();
  DecodeResult r;
  auto out = Decode(*c, "{\"malformed\":\"no\",\"ok\":true}\n", false, &r);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].Find("malformed")->as_string(), "no");
  EXPECT_EQ(r.malformed, "");
  EXPECT_FALSE(r.close);
}

TEST(JsonLinesCodec, EverySplitDecodesLikeTheWhole) {
  const std::string kStreams[] = {"{\"a\":1}\r\n\n[1,2]\n\"s\\n\"\n", "{\"a\":1}\n{bad\n{\"b\":2}\n",
                                  "{\"a\":1}\n{\"b\""};
  auto proto = MakeJsonLinesCodec();
  for (const std::string& bytes : kStreams) {
    std::string whole = DecodeInPieces(*proto, bytes, 0);
    for (size_t piece = 1; piece < bytes.size(); ++piece)
      ASSERT_EQ(DecodeInPieces(*proto, bytes, piece), whole) << "pieces of " << piece << " bytes of " << bytes;
  }
}

// A line over the 16 MiB bound is refused whether it arrives whole or in
// pieces (it was refused only while incomplete).
TEST(JsonLinesCodec, AnOverlongLineIsRefusedHoweverItArrives) {
  const size_t kBound = 16 * 1024 * 1024;
  const std::string over = "\"" + std::string(kBound - 1, 'x') + "\"\n";  // kBound + 1 bytes before \n
  const std::string at = "\"" + std::string(kBound - 2, 'x') + "\"\n";    // exactly kBound
  auto proto = MakeJsonLinesCodec();
  for (size_t piece : {size_t{0}, size_t{1} << 20}) {
    EXPECT_EQ(DecodeInPieces(*proto, over, piece), "MALFORMED a line longer than 16777216 bytes") << piece;
    EXPECT_EQ(DecodeInPieces(*proto, at, piece).size(), kBound + 1) << "a line at the bound is a response";
  }
}

}  // namespace
}  // namespace dualswarm::workers
