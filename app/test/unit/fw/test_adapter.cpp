/* SPDX-License-Identifier: BSD-3-Clause
 * Adapter creation, the PCI function's resources, logging.
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

TEST(Adapter, RejectsInvalidConfigurations)
{
    std::string error;
    AdapterConfig config;
    config.ports = 3;
    EXPECT_EQ(Adapter::create(config, &error), nullptr);
    EXPECT_NE(error.find("ports"), std::string::npos);
    config.ports = 4;
    config.pfs_per_port = 3;
    EXPECT_EQ(Adapter::create(config, &error), nullptr);
    config.ports = 1;
    config.pfs_per_port = 1;
    config.wire = Wire::cable;
    EXPECT_EQ(Adapter::create(config, &error), nullptr);
    EXPECT_NE(error.find("cable"), std::string::npos);
}

TEST(Adapter, PresentsOneFunctionPerPf)
{
    AdapterConfig config;
    config.name = "fn";
    config.ports = 2;
    config.pfs_per_port = 2;
    auto adapter = Adapter::create(config, nullptr);
    ASSERT_NE(adapter, nullptr);
    ASSERT_EQ(adapter->num_functions(), 4u);
    for (uint32_t pf = 0; pf < 4; pf++) {
        DeviceFunction& fn = adapter->function(pf);
        EXPECT_EQ(fn.pf_id(), pf);
        EXPECT_EQ(fn.port_id(), pf % 2);
        EXPECT_GE(fn.msix_count(), 2u);
        int fd = fn.msix_eventfd(0);
        ASSERT_GE(fd, 0);
        uint64_t value;
        EXPECT_EQ(::read(fd, &value, sizeof(value)), -1) << "no interrupt pending at power-on";
        EXPECT_EQ(fn.msix_eventfd(fn.msix_count()), -1);
    }
    /* Each function's GTT window is its own page of storm RAM. */
    EXPECT_NE(adapter->function(0).gtt_memory(), adapter->function(3).gtt_memory());
    EXPECT_NE(adapter->function(0).doorbell_memory(), adapter->function(1).doorbell_memory());
    EXPECT_EQ(adapter->set_engine_affinity(0, 0), 0);
    EXPECT_EQ(adapter->set_engine_affinity(0, -1), 0);
}

TEST(Adapter, LogsThroughTheSink)
{
    std::vector<std::string> lines;
    set_log_sink([&](LogLevel, const std::string& line) { lines.push_back(line); });
    {
        AdapterConfig config;
        config.name = "logged";
        auto adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
    }
    set_log_sink(nullptr);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines[0].find("logged"), std::string::npos);
}

} // namespace
} // namespace cna::fw::test
