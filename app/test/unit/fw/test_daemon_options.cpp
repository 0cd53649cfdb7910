/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd's options: the command line, the configuration file
 * (--config) and which of the two a setting comes from, the messages that
 * name a bad setting's file and line, and the configuration the package
 * ships (transport/daemon/adapterd.conf).
 */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "daemon/daemon_options.h"

namespace cna::adapterd {

using namespace fw;
namespace {

using hsi::control::Fault;

constexpr uint32_t bits(std::initializer_list<Fault> faults)
{
    uint32_t b = 0;
    for (Fault f : faults)
        b |= static_cast<uint32_t>(f);
    return b;
}

/* A directory of configuration files, gone with the test. */
class DaemonOptionsTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = std::filesystem::temp_directory_path() / "cna-adapterd-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text)
    {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    /* Parses {"cna-adapterd", args...}; the error is left in error_. */
    bool parse(std::vector<std::string> args)
    {
        std::vector<const char*> argv{"cna-adapterd"};
        for (const std::string& a : args)
            argv.push_back(a.c_str());
        error_.clear();
        return parse_options(static_cast<int>(argv.size()), argv.data(), &o_, &error_);
    }

    std::string dir_;
    DaemonOptions o_;
    std::string error_;
};

TEST_F(DaemonOptionsTest, CommandLineAlone)
{
    ASSERT_TRUE(parse({"--socket", "/tmp/a.sock", "--ports=2", "--wire", "cable", "--fault", "dma_fault"})) << error_;
    EXPECT_EQ(o_.socket_path, "/tmp/a.sock");
    EXPECT_EQ(o_.adapter.name, "cna-adapterd");
    EXPECT_EQ(o_.adapter.ports, 2u);
    EXPECT_EQ(o_.adapter.wire, Wire::cable);
    EXPECT_EQ(o_.adapter.faults, bits({Fault::dma_fault}));
    EXPECT_EQ(o_.log_level, LogLevel::notice);
    EXPECT_FALSE(o_.daemonize);

    EXPECT_FALSE(parse({"--socket", "/tmp/a.sock", "--ports", "3"}));
    EXPECT_EQ(error_, "invalid --ports '3': expected 1, 2 or 4");
    EXPECT_FALSE(parse({"--ports", "1"}));
    EXPECT_EQ(error_, "--socket PATH is required");
    ASSERT_TRUE(parse({"--socket", "/tmp/a.sock", "--pfs-per-port", "2"})) << error_;
    EXPECT_EQ(o_.adapter.pfs_per_port, 2u);
    EXPECT_EQ(o_.adapter.ports, 1u);
    EXPECT_FALSE(parse({"--socket", "/tmp/a.sock", "--pfs-per-port", "3"}));
    EXPECT_EQ(error_, "invalid --pfs-per-port '3': expected 1, 2 or 4");
    EXPECT_FALSE(parse({"--socket", "/tmp/a.sock", "--ports", "4", "--pfs-per-port", "4"}));
    EXPECT_EQ(error_, "4 ports of 4 PFs: at most 8 PFs");
    EXPECT_FALSE(parse({"--socket", "/tmp/a.sock", "--colour", "blue"}));
    EXPECT_EQ(error_, "unknown option '--colour'");
    EXPECT_FALSE(parse({"--socket", "/tmp/a.sock", "ports", "2"}));
    EXPECT_EQ(error_, "unknown option 'ports'");
    EXPECT_FALSE(parse({"--socket"}));
    EXPECT_EQ(error_, "option '--socket' needs a value");
    EXPECT_FALSE(parse({"--help"}));
    EXPECT_TRUE(error_.starts_with("usage: cna-adapterd ")) << error_;
    EXPECT_NE(error_.find("--config FILE"), std::string::npos) << error_;
}

TEST_F(DaemonOptionsTest, FileValuesApplied)
{
    const std::string conf = write("all.conf", "socket = /run/x/adapterd.sock\n"
                                               "name = lab\n"
                                               "ports = 4\n"
                                               "wire = tap:cna0,cna1\n"
                                               "engine-threads = 2\n"
                                               "engine-cpus = 0,1\n"
                                               "fault = lose_ramrod\n"
                                               "link-up-delay = 250\n"
                                               "log-level = debug\n"
                                               "idle-exit = 30\n");
    ASSERT_TRUE(parse({"--config", conf})) << error_;
    EXPECT_EQ(o_.socket_path, "/run/x/adapterd.sock");
    EXPECT_EQ(o_.adapter.name, "lab");
    EXPECT_EQ(o_.adapter.ports, 4u);
    EXPECT_EQ(o_.adapter.wire, Wire::loopback);
    EXPECT_EQ(o_.adapter.tap_names[0], "cna0");
    EXPECT_EQ(o_.adapter.tap_names[1], "cna1");
    EXPECT_EQ(o_.adapter.tap_names[2], "");
    EXPECT_EQ(o_.adapter.engine_threads, 2u);
    EXPECT_EQ(o_.engine_cpus, (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(o_.adapter.faults, bits({Fault::lose_ramrod}));
    EXPECT_EQ(o_.adapter.link_up_delay_ms, 250u);
    EXPECT_EQ(o_.log_level, LogLevel::debug);
    EXPECT_EQ(o_.idle_exit_s, 30u);
    EXPECT_FALSE(o_.daemonize);

    /* --config=FILE, and --daemonize beside it. */
    ASSERT_TRUE(parse({"--daemonize", "--config=" + conf})) << error_;
    EXPECT_EQ(o_.adapter.ports, 4u);
    EXPECT_TRUE(o_.daemonize);
}

TEST_F(DaemonOptionsTest, CommandLineWinsWhereverConfigStands)
{
    const std::string conf = write("base.conf", "socket = /run/cna/adapterd.sock\n"
                                                "ports = 4\n"
                                                "wire = tap:t0,t1,t2,t3\n"
                                                "log-level = debug\n"
                                                "engine-cpus = 1\n");
    /* Before --config and after it: the command line's values. */
    ASSERT_TRUE(parse({"--ports", "2", "--log-level=err", "--config", conf, "--wire", "cable",
                       "--socket", "/tmp/b.sock"}))
        << error_;
    EXPECT_EQ(o_.socket_path, "/tmp/b.sock");
    EXPECT_EQ(o_.adapter.ports, 2u);
    EXPECT_EQ(o_.log_level, LogLevel::err);
    EXPECT_EQ(o_.adapter.wire, Wire::cable);
    for (const std::string& tap : o_.adapter.tap_names)
        EXPECT_EQ(tap, "") << "the command line's wire replaces the file's TAPs";
    EXPECT_EQ(o_.engine_cpus, (std::vector<uint32_t>{1}));

    /* The file's four TAPs are too many for the command line's 2 ports:
     * checked once both have applied. */
    EXPECT_FALSE(parse({"--config", conf, "--ports", "2"}));
    EXPECT_EQ(error_, "--wire tap: 4 interfaces for 2 port(s)");

    /* A setting only the command line has is the command line's. */
    ASSERT_TRUE(parse({"--config", conf, "--name", "other", "--idle-exit", "5"})) << error_;
    EXPECT_EQ(o_.adapter.name, "other");
    EXPECT_EQ(o_.idle_exit_s, 5u);
    EXPECT_EQ(o_.adapter.ports, 4u);
    EXPECT_EQ(o_.adapter.tap_names[3], "t3");

    /* A bad command-line value is refused even where the file has a good one. */
    EXPECT_FALSE(parse({"--config", conf, "--ports", "3"}));
    EXPECT_EQ(error_, "invalid --ports '3': expected 1, 2 or 4");
}

TEST_F(DaemonOptionsTest, RepeatedFaultsAndTheCommandLinesReplaceThem)
{
    const std::string conf = write("faults.conf", "socket = /tmp/c.sock\n"
                                                  "fault = lose_ramrod\n"
                                                  "fault = dma_fault\n"
                                                  "fault = lose_ramrod\n");
    ASSERT_TRUE(parse({"--config", conf})) << error_;
    EXPECT_EQ(o_.adapter.faults, bits({Fault::lose_ramrod, Fault::dma_fault}));
    ASSERT_TRUE(parse({"--fault", "mfw_silent", "--config", conf, "--fault", "fw_assert"})) << error_;
    EXPECT_EQ(o_.adapter.faults, bits({Fault::mfw_silent, Fault::fw_assert}));
}

TEST_F(DaemonOptionsTest, CommentsBlankLinesAndWhitespace)
{
    const std::string conf = write("spaced.conf", "# a comment\n"
                                                  "\n"
                                                  "   \t\n"
                                                  "   # an indented comment = with an equals sign\n"
                                                  "\tsocket\t=\t/tmp/d.sock  \n"
                                                  "ports=2\r\n"
                                                  "  name   =   lab one  \n"
                                                  "log-level =info"); /* no newline at the end */
    ASSERT_TRUE(parse({"--config", conf})) << error_;
    EXPECT_EQ(o_.socket_path, "/tmp/d.sock");
    EXPECT_EQ(o_.adapter.ports, 2u);
    EXPECT_EQ(o_.adapter.name, "lab one") << "blanks inside a value are the value's";
    EXPECT_EQ(o_.log_level, LogLevel::info);

    /* An empty file, or one of comments only, sets nothing. */
    ASSERT_TRUE(parse({"--config", write("empty.conf", ""), "--socket", "/tmp/e.sock"})) << error_;
    EXPECT_EQ(o_.adapter.ports, 1u);
    ASSERT_TRUE(parse({"--socket", "/tmp/e.sock", "--config", write("comments.conf", "# nothing\n\n#\n")}))
        << error_;

    /* A # after a value is the value's. */
    EXPECT_FALSE(parse({"--config", write("trailing.conf", "socket = /tmp/f.sock\nports = 2 # two\n")}));
    EXPECT_EQ(error_, dir_ + "/trailing.conf:2: invalid ports '2 # two': expected 1, 2 or 4");
}

TEST_F(DaemonOptionsTest, ErrorsNameTheFileAndLine)
{
    const std::string conf = write("bad.conf", "# cna-adapterd\n"
                                               "socket = /tmp/g.sock\n"
                                               "\n"
                                               "name = lab\n"
                                               "# the ports\n"
                                               "\n"
                                               "ports = 3\n");
    EXPECT_FALSE(parse({"--config", conf}));
    EXPECT_EQ(error_, conf + ":7: invalid ports '3': expected 1, 2 or 4");
    /* The file's mistake is reported even where the command line sets the key. */
    EXPECT_FALSE(parse({"--config", conf, "--ports", "2"}));
    EXPECT_EQ(error_, conf + ":7: invalid ports '3': expected 1, 2 or 4");

    const struct {
        std::string text;
        const char* error;
    } cases[] = {
        {"socket =\n", ":1: invalid socket '': expected a unix socket path of 1 to 107 characters"},
        {"\nwire = tap:\n", ":2: invalid wire 'tap:': expected loopback, cable or tap:<ifname>[,<ifname>...] (one "
                            "per port)"},
        {"engine-cpus = 0,,1\n", ":1: invalid engine-cpus '0,,1': expected CPU numbers, one per engine thread, as 0,1"},
        {"fault = none\n", ":1: invalid fault 'none': expected mfw_silent, fw_assert, lose_ramrod or dma_fault"},
        {"log-level = loud\n", ":1: invalid log-level 'loud': expected err, warning, notice, info or debug"},
        {"idle-exit = -1\n", ":1: invalid idle-exit '-1': expected seconds, 0 (never) to 86400"},
        {"ports 2\n", ":1: expected key = value, not 'ports 2'"},
        {" = 2\n", ":1: expected key = value, not '= 2'"},
        {"--ports = 2\n", ":1: unknown key '--ports'"},
        {"daemonize = 1\n", ":1: daemonize is a command-line option only (--daemonize)"},
        {"config = /etc/cna/other.conf\n", ":1: config is a command-line option only (--config)"},
        {std::string("name = a\0b\n", 11), ":1: a NUL character"},
    };
    for (const auto& c : cases) {
        const std::string path = write("case.conf", c.text);
        EXPECT_FALSE(parse({"--socket", "/tmp/h.sock", "--config", path})) << c.text;
        EXPECT_EQ(error_, path + c.error);
    }

    /* Checks that need every setting name no line: the command line may
     * settle them. */
    EXPECT_FALSE(parse({"--config", write("nosocket.conf", "ports = 2\n")}));
    EXPECT_EQ(error_, "--socket PATH is required (or socket = PATH in " + dir_ + "/nosocket.conf)");
    EXPECT_FALSE(parse({"--config", write("cpus.conf", "socket = /tmp/i.sock\nengine-cpus = 0,1\n")}));
    EXPECT_EQ(error_, "--engine-cpus: 2 CPU(s) for 1 engine thread(s); give one per thread");
    EXPECT_TRUE(parse({"--config", dir_ + "/cpus.conf", "--ports", "2", "--engine-threads", "2"})) << error_;
}

TEST_F(DaemonOptionsTest, UnknownKey)
{
    const std::string conf = write("unknown.conf", "socket = /tmp/j.sock\ncolour = blue\nports = 2\n");
    EXPECT_FALSE(parse({"--config", conf}));
    EXPECT_EQ(error_, conf + ":2: unknown key 'colour'");
}

TEST_F(DaemonOptionsTest, UnreadableFile)
{
    EXPECT_FALSE(parse({"--socket", "/tmp/k.sock", "--config", "/nonexistent/adapterd.conf"}));
    EXPECT_EQ(error_, "cannot read /nonexistent/adapterd.conf: No such file or directory");
    EXPECT_FALSE(parse({"--socket", "/tmp/k.sock", "--config", dir_}));
    EXPECT_EQ(error_, "cannot read " + dir_ + ": Is a directory");
    EXPECT_FALSE(parse({"--socket", "/tmp/k.sock", "--config", "/nonexistent/x"}));
    EXPECT_EQ(error_, "cannot read /nonexistent/x: No such file or directory");
    if (::geteuid() != 0) { /* root reads a file of mode 0 all the same */
        const std::string conf = write("secret.conf", "ports = 2\n");
        std::filesystem::permissions(conf, std::filesystem::perms::none);
        EXPECT_FALSE(parse({"--config", conf}));
        EXPECT_EQ(error_, "cannot read " + conf + ": Permission denied");
    }

    EXPECT_FALSE(parse({"--config", ""}));
    EXPECT_EQ(error_, "invalid --config '': expected a file");
    const std::string conf = write("once.conf", "socket = /tmp/k.sock\n");
    EXPECT_FALSE(parse({"--config", conf, "--config", conf}));
    EXPECT_EQ(error_, "--config given twice");
    EXPECT_FALSE(parse({"--config"}));
    EXPECT_EQ(error_, "option '--config' needs a value");
}

TEST_F(DaemonOptionsTest, ParsedFromAStringThroughAReader)
{
    const char* argv[] = {"cna-adapterd", "--config", "mem.conf", "--ports", "1"};
    std::string asked;
    const ConfigReader reader = [&](const std::string& path, std::string* text, std::string*) {
        asked = path;
        *text = "socket = /tmp/l.sock\nports = 4\nwire = cable\n";
        return true;
    };
    ASSERT_TRUE(parse_options(5, argv, &o_, &error_, reader)) << error_;
    EXPECT_EQ(asked, "mem.conf");
    EXPECT_EQ(o_.socket_path, "/tmp/l.sock");
    EXPECT_EQ(o_.adapter.ports, 1u);
    EXPECT_EQ(o_.adapter.wire, Wire::cable);

    const ConfigReader failing = [](const std::string& path, std::string*, std::string* error) {
        *error = "cannot read " + path + ": Input/output error";
        return false;
    };
    EXPECT_FALSE(parse_options(5, argv, &o_, &error_, failing));
    EXPECT_EQ(error_, "cannot read mem.conf: Input/output error");
}

TEST_F(DaemonOptionsTest, TheShippedConfigurationParses)
{
    ASSERT_TRUE(parse({"--config", CNA_ADAPTERD_CONF})) << error_;
    EXPECT_EQ(o_.socket_path, "/run/cna/adapterd.sock");
    EXPECT_EQ(o_.adapter.ports, 2u);
    EXPECT_EQ(o_.adapter.wire, Wire::loopback);
    for (const std::string& tap : o_.adapter.tap_names)
        EXPECT_EQ(tap, "");
    EXPECT_EQ(o_.log_level, LogLevel::notice);
    EXPECT_EQ(o_.adapter.name, "cna-adapterd");
    EXPECT_EQ(o_.adapter.faults, 0u);
    EXPECT_EQ(o_.adapter.engine_threads, 1u);
    EXPECT_TRUE(o_.engine_cpus.empty());
    EXPECT_EQ(o_.idle_exit_s, 0u);
    EXPECT_FALSE(o_.daemonize);

    /* Its commented-out examples are good settings too, uncommented. */
    std::ifstream in(CNA_ADAPTERD_CONF);
    std::string text, line;
    int examples = 0;
    while (std::getline(in, line)) {
        if (line.size() > 1 && line[0] == '#' && line[1] != ' ' && line.find('=') != std::string::npos) {
            line.erase(0, 1);
            examples++;
        }
        text += line + "\n";
    }
    EXPECT_GE(examples, 7);
    ASSERT_TRUE(parse({"--config", write("examples.conf", text)})) << error_;
    EXPECT_EQ(o_.adapter.name, "cna0");
    EXPECT_EQ(o_.adapter.engine_threads, 2u);
    EXPECT_NE(o_.adapter.faults, 0u);
}

} // namespace
} // namespace cna::adapterd
