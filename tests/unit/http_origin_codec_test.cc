// The HTTP side of intermediaries: origin names mapped at the wire
// (origin_names.h), absolute-form targets in the clients' codec, and the
// origin codec that decodes the requests an intermediary sends and
// encodes the tester's answers (http_origin_codec.cc).
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "tests/unit/codec_pieces.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/origin_names.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

TEST(OriginNames, MapBothWaysWithoutTakingPrefixes) {
  std::vector<int> ports(13, 0);
  for (size_t k = 0; k < ports.size(); ++k) ports[k] = 8000 + static_cast<int>(k);
  ports[1] = 808;
  OriginNames names(ports);
  EXPECT_EQ(names.ToWire("http://origin-1/x"), "http://127.0.0.1:808/x");
  EXPECT_EQ(names.ToWire("http://origin-12/x"), "http://127.0.0.1:8012/x");
  EXPECT_EQ(names.FromWire("127.0.0.1:808, 127.0.0.1:8080"), "origin-1, 127.0.0.1:8080");
  EXPECT_EQ(names.FromWire("http://127.0.0.1:8012/y"), "http://origin-12/y");
  EXPECT_EQ(OriginNames().ToWire("origin-0"), "origin-0");
}

TEST(HttpCodec, AbsoluteFormNamesAnOriginAndItsHost) {
  auto c = MakeHttpCodec("127.0.0.1:80", OriginNames({4567}));
  auto plain = c->Encode(*ir::ParseJson(R"({"method":"GET","path":"http://origin-0/a?b"})"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->substr(0, plain->find("\r\n\r\n")),
            "GET http://127.0.0.1:4567/a?b HTTP/1.1\r\nhost: 127.0.0.1:4567");
  // The IR's own host is sent (a proxy must replace it: RFC 9112 §3.2.2).
  auto own = c->Encode(*ir::ParseJson(R"({"method":"GET","path":"http://origin-0/","headers":{"Host":"elsewhere"}})"));
  ASSERT_TRUE(own.ok());
  EXPECT_NE(own->find("\r\nhost: elsewhere\r\n"), std::string::npos) << *own;
  EXPECT_EQ(own->find("127.0.0.1:80\r\n"), std::string::npos) << *own;
  // Origin-form keeps the target's address and ignores the IR's host.
  auto origin_form = c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/x","headers":{"host":"h"}})"));
  ASSERT_TRUE(origin_form.ok());
  EXPECT_NE(origin_form->find("host: 127.0.0.1:80\r\n"), std::string::npos);
  EXPECT_EQ(origin_form->find("host: h"), std::string::npos);
  // Responses name the origin again.
  DecodeResult r;
  auto got =
      Decode(*c, "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:4567/z\r\ncontent-length: 0\r\n\r\n", false, &r);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Find("headers")->Find("location")->as_string(), "http://origin-0/z");
}

TEST(HttpCodec, AResponseToHeadHasNoBody) {
  auto c = MakeHttpCodec("h");
  ASSERT_TRUE(c->Encode(*ir::ParseJson(R"({"method":"HEAD","path":"/a"})")).ok());
  ASSERT_TRUE(c->Encode(*ir::ParseJson(R"({"method":"GET","path":"/a"})")).ok());
  DecodeResult r;
  auto got = Decode(*c,
                    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"
                    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
                    false, &r);
  ASSERT_EQ(got.size(), 2u) << r.malformed;
  EXPECT_EQ(got[0].Find("body")->as_string(), "");
  EXPECT_EQ(got[1].Find("body")->as_string(), "hello");
}

TEST(HttpOriginCodec, DecodesRequestsWithAnyFraming) {
  auto c = MakeHttpOriginCodec(OriginNames({4567}));
  DecodeResult r;
  auto got = Decode(*c,
                    "GET /a HTTP/1.1\r\nHost: 127.0.0.1:4567\r\nVia: 1.1 p\r\n\r\n"
                    "PUT /b HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc"
                    "POST /c HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n",
                    false, &r);
  ASSERT_EQ(got.size(), 3u) << r.malformed;
  EXPECT_EQ(ir::ToJson(got[0]),
            R"({"body":"","headers":{"host":"origin-0","via":"1.1 p"},"method":"GET","path":"/a"})");
  EXPECT_EQ(got[1].Find("body")->as_string(), "abc");
  EXPECT_EQ(got[2].Find("method")->as_string(), "POST");
  EXPECT_EQ(got[2].Find("body")->as_string(), "xy");
  EXPECT_TRUE(r.malformed.empty());
}

TEST(HttpOriginCodec, GarbageIsMalformedNamingWhy) {
  for (const auto& [bytes, why] :
       std::vector<std::pair<const char*, const char*>>{{"HTTP/1.1 200 OK\r\n\r\n", "bad request line"},
                                                        {"\x01GET /a HTTP/1.1\r\n\r\n", "not an HTTP request line"},
                                                        {"GET /a SPDY/3\r\n\r\n", "bad request line"},
                                                        {"GET  HTTP/1.1\r\n\r\n", "bad request line"},
                                                        {"GET /a HTTP/1.1\r\nno colon\r\n\r\n", "bad header line"}}) {
    auto c = MakeHttpOriginCodec({});
    DecodeResult r;
    auto got = Decode(*c, bytes, false, &r);
    EXPECT_TRUE(got.empty()) << bytes;
    EXPECT_TRUE(r.close) << bytes;
    EXPECT_NE(r.malformed.find(why), std::string::npos) << bytes << ": " << r.malformed;
  }
  auto c = MakeHttpOriginCodec({});
  DecodeResult r;
  EXPECT_TRUE(Decode(*c, "GET /a HTT", false, &r).empty());  // a partial request waits
  EXPECT_TRUE(r.malformed.empty());
  EXPECT_TRUE(Decode(*c, "GET /a HTT", true, &r).empty());  // ... unless the peer closed
  EXPECT_NE(r.malformed.find("connection closed inside a request header"), std::string::npos) << r.malformed;
}

TEST(HttpOriginCodec, EncodesAnswersInRequestOrder) {
  auto c = MakeHttpOriginCodec(OriginNames({4567}));
  DecodeResult r;
  ASSERT_EQ(Decode(*c, "HEAD /a HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", false, &r).size(), 3u);
  auto head = c->Encode(*ir::ParseJson(R"({"status":200,"headers":{"ETag":"\"e\""},"body":"hello"})"));
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->substr(0, 23), "HTTP/1.1 200 OK\r\netag: ");
  EXPECT_NE(head->find("\r\ndate: "), std::string::npos);
  EXPECT_NE(head->find("content-length: 5\r\n\r\n"), std::string::npos);
  EXPECT_EQ(head->find("hello"), std::string::npos) << "no body for a HEAD";
  auto get = c->Encode(*ir::ParseJson(
      R"({"status":200,"headers":{"date":"Mon, 01 Jan 2024 00:00:00 GMT","location":"http://origin-0/x"},"body":"hello"})"));
  ASSERT_TRUE(get.ok());
  EXPECT_NE(get->find("date: Mon, 01 Jan 2024 00:00:00 GMT\r\n"), std::string::npos);
  EXPECT_EQ(get->find("date:", get->find("date:") + 1), std::string::npos) << "one date only";
  EXPECT_NE(get->find("location: http://127.0.0.1:4567/x\r\n"), std::string::npos);
  EXPECT_EQ(get->substr(get->size() - 9), "\r\n\r\nhello");
  auto not_modified = c->Encode(*ir::ParseJson(R"({"status":304,"body":"ignored"})"));
  ASSERT_TRUE(not_modified.ok());
  EXPECT_EQ(not_modified->find("content-length"), std::string::npos);
  EXPECT_EQ(not_modified->substr(not_modified->size() - 4), "\r\n\r\n");
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"status":"200"})")).ok());
  EXPECT_FALSE(c->Encode(*ir::ParseJson(R"({"status":200,"headers":{"x":"a\nb"}})")).ok());
}

// RFC 9112 §6.3: the last transfer coding decides the framing; a request
// whose list does not end in chunked is malformed, a response's body then
// runs to the close. And a method is bounded (so a SUT that trickles a
// never-ending one is refused at once, in linear time).
TEST(HttpParser, TransferCodingsAndMethodsAreJudgedAsRfc9112Says) {
  DecodeResult r;
  auto origin = MakeHttpOriginCodec({});
  auto got = Decode(*origin,
                    "POST /a HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\ncontent-length: 99\r\n\r\n"
                    "2\r\nxy\r\n0\r\n\r\n",
                    false, &r);
  ASSERT_EQ(got.size(), 1u) << r.malformed;
  EXPECT_EQ(got[0].Find("body")->as_string(), "xy");
  auto bad = MakeHttpOriginCodec({});
  EXPECT_TRUE(Decode(*bad, "POST /a HTTP/1.1\r\ntransfer-encoding: chunked, gzip\r\n\r\n", false, &r).empty());
  EXPECT_NE(r.malformed.find("does not end in chunked"), std::string::npos) << r.malformed;
  auto x_chunked = MakeHttpOriginCodec({});
  EXPECT_TRUE(Decode(*x_chunked, "POST /a HTTP/1.1\r\ntransfer-encoding: x-chunked\r\n\r\n", false, &r).empty());
  EXPECT_NE(r.malformed.find("does not end in chunked"), std::string::npos) << r.malformed;
  auto trickle = MakeHttpOriginCodec({});
  EXPECT_TRUE(Decode(*trickle, std::string(33, 'G'), false, &r).empty());
  EXPECT_NE(r.malformed.find("not an HTTP request line"), std::string::npos) << r.malformed;
  auto huge = MakeHttpOriginCodec({});
  EXPECT_TRUE(Decode(*huge, "PUT /a HTTP/1.1\r\ncontent-length: 99999999999\r\n\r\n", false, &r).empty());
  EXPECT_NE(r.malformed.find("exceeds the 16777216-byte body bound"), std::string::npos) << r.malformed;

  auto client = MakeHttpCodec("h");
  auto gzip = Decode(*client, "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ncontent-length: 1\r\n\r\nabc", true, &r);
  ASSERT_EQ(gzip.size(), 1u) << r.malformed;
  EXPECT_EQ(gzip[0].Find("body")->as_string(), "abc") << "runs to the close, whatever Content-Length says";
}

// RFC 9112 §9.3 and §9.6: the origin closes after answering a request that
// does not keep its connection, and only then.
TEST(HttpOriginCodec, ClosesAfterAnsweringARequestThatAskedForIt) {
  const Value ok = *ir::ParseJson(R"({"status":200,"body":"x"})");
  for (const auto& [request, closes] :
       std::vector<std::pair<const char*, bool>>{{"GET / HTTP/1.1\r\n\r\n", false},
                                                 {"GET / HTTP/1.1\r\nConnection: x-hop, Close\r\n\r\n", true},
                                                 {"GET / HTTP/1.0\r\n\r\n", true},
                                                 {"GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n", false}}) {
    auto c = MakeHttpOriginCodec({});
    DecodeResult r;
    ASSERT_EQ(Decode(*c, request, false, &r).size(), 1u) << request;
    ASSERT_TRUE(c->Encode(*ir::ParseJson(R"({"status":100})")).ok());
    EXPECT_FALSE(c->EndsConnection()) << request << ": an interim answer leaves the request open";
    auto answer = c->Encode(ok);
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(c->EndsConnection(), closes) << request;
    EXPECT_EQ(answer->find("connection: close\r\n") != std::string::npos, closes) << *answer;
  }
}

}  // namespace
}  // namespace dualswarm::workers
