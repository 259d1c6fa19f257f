// util::ReadFileTail (util/file_tail.h): the last bytes of a file, all of a
// smaller one, NOT_FOUND for a missing one. The SUT launcher and the worker
// daemon's job process read their logs' tails with it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "util/file_tail.h"

namespace dualswarm::util {
namespace {

class FileTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ds-file-tail-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(FileTailTest, SmallerFileIsReadWhole) {
  std::string path = Write("small.log", std::string("line one\nline\0two\n", 18));
  auto tail = ReadFileTail(path, 100);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(*tail, std::string("line one\nline\0two\n", 18));
  EXPECT_EQ(*ReadFileTail(path, 18), std::string("line one\nline\0two\n", 18)) << "exactly max_bytes";
  EXPECT_EQ(*ReadFileTail(Write("empty.log", ""), 100), "");
}

TEST_F(FileTailTest, LargerFileGivesItsLastBytes) {
  std::string content(1 << 20, 'x');
  content += "the end";
  std::string path = Write("big.log", content);
  auto tail = ReadFileTail(path, 10);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(*tail, "xxxthe end");
  EXPECT_EQ(*ReadFileTail(path, 0), "");
}

TEST_F(FileTailTest, MissingFileIsNotFound) {
  auto tail = ReadFileTail((dir_ / "no-such.log").string(), 100);
  EXPECT_EQ(tail.status().code(), absl::StatusCode::kNotFound) << tail.status();
  EXPECT_NE(tail.status().message().find("no-such.log"), std::string::npos) << tail.status();
}

}  // namespace
}  // namespace dualswarm::util
