/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna's devargs parser (pmd/net/cna_devargs.cpp), without EAL: what
 * each value of engine= gives, and the combinations refused with it; the
 * representors DPDK's representor= syntax names.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <initializer_list>
#include <string>
#include <vector>

#include "cna_devargs.h"

namespace cna::net {
namespace {

/* Parses `args` for net_cna0: the return code, the values in *d and the
 * message in *error. */
int parse(const char* args, Devargs* d, std::string* error)
{
    error->clear();
    return parse_devargs("net_cna0", args, d, error);
}

/* `args` refused (-EINVAL), the message saying each of `said`. */
void expect_refused(const char* args, std::initializer_list<const char*> said)
{
    Devargs d;
    std::string error;
    EXPECT_EQ(parse(args, &d, &error), -EINVAL) << args;
    for (const char* words : said)
        EXPECT_NE(error.find(words), std::string::npos) << args << ": " << error;
}

TEST(Devargs, EngineDefaultsToThreadsNotGiven)
{
    Devargs d;
    std::string error;
    ASSERT_EQ(parse(nullptr, &d, &error), 0) << error;
    EXPECT_EQ(d.engine, EnginePlacement::threads);
    EXPECT_FALSE(d.engine_given);
    ASSERT_EQ(parse("adapter=a,ports=2,port=1", &d, &error), 0) << error;
    EXPECT_EQ(d.engine, EnginePlacement::threads);
    EXPECT_FALSE(d.engine_given);
    EXPECT_EQ(d.engine_threads, 1u);
}

TEST(Devargs, EngineValues)
{
    struct Case {
        const char* args;
        EnginePlacement engine;
    };
    for (const Case& c : {Case{"engine=threads", EnginePlacement::threads},
                          Case{"engine=inline", EnginePlacement::inline_},
                          Case{"engine=service", EnginePlacement::service},
                          Case{"adapter=a,ports=2,wire=cable,port=1,engine=inline", EnginePlacement::inline_},
                          Case{"engine=service,adapter=b", EnginePlacement::service}}) {
        Devargs d;
        std::string error;
        ASSERT_EQ(parse(c.args, &d, &error), 0) << c.args << ": " << error;
        EXPECT_EQ(d.engine, c.engine) << c.args;
        EXPECT_TRUE(d.engine_given) << c.args;
        EXPECT_EQ(d.engine_threads, 1u) << c.args;
    }
}

TEST(Devargs, EngineBadValueNamesTheChoices)
{
    for (const char* args : {"engine=bogus", "engine=", "engine=Inline", "engine=thread", "engine=inline_",
                             "engine=services", "engine=1"}) {
        expect_refused(args, {"threads, inline or service", "engine"});
    }
    /* The key alone (no '='). */
    Devargs d;
    std::string error;
    EXPECT_EQ(parse("engine", &d, &error), -EINVAL);
    EXPECT_FALSE(error.empty());
}

TEST(Devargs, EngineOnHostRefusedWithDaemon)
{
    for (const char* args : {"engine=inline,daemon=/run/cna/a.sock,pf=0", "daemon=/run/cna/a.sock,engine=service",
                             "daemon=/run/cna/a.sock,pf=1,engine=inline"}) {
        expect_refused(args, {"'engine'", "'daemon'"});
    }
    /* engine=threads is what a daemon does anyway. */
    Devargs d;
    std::string error;
    ASSERT_EQ(parse("daemon=/run/cna/a.sock,pf=0,engine=threads", &d, &error), 0) << error;
    EXPECT_EQ(d.engine, EnginePlacement::threads);
    EXPECT_TRUE(d.engine_given);
    EXPECT_EQ(d.daemon, "/run/cna/a.sock");
}

TEST(Devargs, EngineOnHostRefusesEngineThreads)
{
    for (const char* args : {"engine=service,engine_threads=2", "engine_threads=2,engine=inline",
                             "ports=4,engine=inline,engine_threads=4", "engine=service,engine_threads=3"}) {
        expect_refused(args, {"engine_threads"});
    }
    /* One thread (the slowpath's), given or not, and its CPU. */
    for (const char* args : {"engine=inline,engine_threads=1", "engine=service,engine_threads=1,engine_cpu=0",
                             "engine=inline,engine_cpu=[1]"}) {
        Devargs d;
        std::string error;
        EXPECT_EQ(parse(args, &d, &error), 0) << args << ": " << error;
        EXPECT_EQ(d.engine_threads, 1u) << args;
    }
    /* With engine threads, several stay allowed. */
    Devargs d;
    std::string error;
    ASSERT_EQ(parse("ports=2,engine=threads,engine_threads=2", &d, &error), 0) << error;
    EXPECT_EQ(d.engine_threads, 2u);
    EXPECT_EQ(d.engine, EnginePlacement::threads);
}

TEST(Devargs, EngineIsADocumentedKey)
{
    EXPECT_NE(std::string(CNA_DEVARGS_PARAM_STRING).find("engine=<threads|inline|service>"), std::string::npos);
    Devargs d;
    std::string error;
    EXPECT_EQ(parse("engine_placement=inline", &d, &error), -EINVAL);
    EXPECT_NE(error.find("engine=<threads|inline|service>"), std::string::npos) << error;
}

TEST(Devargs, EngineIsNotAVfKey)
{
    /* A VF's port runs on its PF's adapter: the placement is the PF's. */
    Devargs d;
    std::string error;
    EXPECT_EQ(parse_vf_devargs("net_cna_vf0", "adapter=a,port=0,vf=0,engine=inline", &d, &error), -EINVAL);
    EXPECT_NE(error.find("'engine'"), std::string::npos) << error;
    error.clear();
    ASSERT_EQ(parse_vf_devargs("net_cna_vf0", "adapter=a,port=0,vf=0", &d, &error), 0) << error;
    EXPECT_EQ(d.engine, EnginePlacement::threads);
    EXPECT_FALSE(d.engine_given);
}

TEST(Devargs, AVfsRdmaIsAskedFor)
{
    /* It takes a status block from the VF's queues: off unless asked. */
    Devargs d;
    std::string error;
    ASSERT_EQ(parse_vf_devargs("net_cna_vf0", "daemon=/s,pf=0,vf=1", &d, &error), 0) << error;
    EXPECT_FALSE(d.rdma);
    ASSERT_EQ(parse_vf_devargs("net_cna_vf0", "daemon=/s,pf=0,vf=1,rdma=1,ipv4=10.0.0.5/24", &d, &error), 0)
        << error;
    EXPECT_TRUE(d.rdma);
    ASSERT_TRUE(d.ipv4.has_value());
    EXPECT_EQ(d.ipv4->prefix, 24u);
    EXPECT_EQ(parse_vf_devargs("net_cna_vf0", "daemon=/s,pf=0,vf=1,rdma=2", &d, &error), -EINVAL);
    EXPECT_NE(error.find("rdma"), std::string::npos) << error;
}

TEST(Devargs, RepresentorsInEveryFormDpdkGivesThem)
{
    Devargs d;
    std::string error;
    ASSERT_EQ(parse("vfs=4,representor=[0-3]", &d, &error), 0) << error;
    EXPECT_EQ(d.representors, (std::vector<uint16_t>{0, 1, 2, 3}));
    ASSERT_EQ(parse("vfs=4,representor=vf[2,0]", &d, &error), 0) << error;
    EXPECT_EQ(d.representors, (std::vector<uint16_t>{0, 2}));
    ASSERT_EQ(parse("vfs=2,representor=pf0vf1", &d, &error), 0) << error;
    EXPECT_EQ(d.representors, std::vector<uint16_t>{1});
    EXPECT_EQ(d.switch_rules, hsi::eswitch::MAX_RULES);
    ASSERT_EQ(parse("vfs=2,representor=1,switch_rules=100", &d, &error), 0) << error;
    EXPECT_EQ(d.switch_rules, 100u);
    ASSERT_EQ(parse("vfs=2", &d, &error), 0) << error;
    EXPECT_TRUE(d.representors.empty()) << "none asked for: legacy mode";
}

TEST(Devargs, RepresentorsOfNoSuchVfOrKindAreRefused)
{
    expect_refused("vfs=2,representor=[0-2]", {"representor", "VF 2", "2 VF(s)"});
    expect_refused("representor=0", {"VF 0", "0 VF(s)"});
    expect_refused("vfs=2,representor=sf1", {"representor=sf1", "VF representors"});
    expect_refused("vfs=2,representor=pf1vf0", {"representor=pf1vf0"});
    expect_refused("vfs=2,representor=c1pf0vf0", {"representor=c1pf0vf0"});
    expect_refused("vfs=2,representor=", {"representor"});
    expect_refused("vfs=2,representor=[0-1],switch_rules=0", {"switch_rules=0", "1 to 131072"});
    expect_refused("vfs=2,representor=[0-1],switch_rules=131073", {"switch_rules=131073"});
}

} // namespace
} // namespace cna::net
