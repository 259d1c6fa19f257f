// ProgressLine (cli/progress_line.h): redrawn in place on a terminal; into
// a file, whole lines, at most one per interval, and no carriage returns.
#include "cli/progress_line.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace dualswarm {
namespace {

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

TEST(ProgressLine, IntoAFileEachReportIsALineAtMostOnePerInterval) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  cli::ProgressLine p(f, /*every_seconds=*/3600);
  EXPECT_FALSE(p.in_place());
  p.Show("  1.0s  sent 10/100");
  p.Show("  2.0s  sent 20/100");  // within the interval: not written
  p.Clear();
  EXPECT_EQ(Contents(f), "  1.0s  sent 10/100\n");
  std::fclose(f);

  std::FILE* g = std::tmpfile();
  cli::ProgressLine every(g, /*every_seconds=*/0);
  every.Show("a");
  every.Show("b");
  every.Clear();
  EXPECT_EQ(Contents(g), "a\nb\n");
  std::fclose(g);
}

TEST(ProgressLine, OnATerminalTheLineIsRedrawnAndErased) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  std::FILE* tty = fdopen(slave, "w");
  ASSERT_NE(tty, nullptr);
  {
    cli::ProgressLine p(tty, 3600);
    EXPECT_TRUE(p.in_place());
    p.Show("long line");
    p.Show("short");  // at once, and padded over the longer one
    p.Clear();
  }
  std::fclose(tty);
  const std::string want = "\rlong line\rshort    \r         \r";
  std::string got;
  char buf[256];
  // Reading stops at what was written (or EIO: the terminal's other end
  // is closed).
  for (ssize_t n; got.size() < want.size() && (n = read(master, buf, sizeof buf)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  close(master);
  EXPECT_EQ(got, want);
}

TEST(ProgressLine, ShrinkingSaysHowOftenReproduced) {
  EXPECT_EQ(cli::ShrinkingLine(52, 31, 3, false), "  shrinking: 52 reruns, 31 reproduced, 3 requests left");
  EXPECT_EQ(cli::ShrinkingLine(1, 1, 1, true), "  shrinking: 1 reruns, 1 reproduced, 1 request left, flaky");
  EXPECT_EQ(cli::VerifyingLine(3, 5, 2), "  verifying: 3 of 5 replays, 2 reproduced");
}

}  // namespace
}  // namespace dualswarm
