import Foundation
import SqlCipherKit
import Testing

/// Runs the built benchmark in its quick mode. Checks that it runs every workload against the
/// library under test and reports sane figures; it never asserts speed.
@Suite("Benchmark smoke run")
struct BenchSmokeTests {
    /// Every workload the benchmark must report.
    static let workloads = [
        "insert", "insert.prepared", "fetch.byIndex", "fetch.byName", "cursor.byIndex", "cursor.byName",
        "fetch.entity", "fetch.entity.row", "entity.save", "entity.save.row", "entity.upsert", "entity.save.sets",
        "open.passphrase", "open.rawKey", "open.unencrypted",
        "insert.observers.none", "insert.observers.otherTables", "insert.observers.sameTable",
        "stream.cursor", "stream.asyncSequence", "stream.mainActor",
        "tracing.insert.off", "tracing.insert.on", "tracing.fetch.off", "tracing.fetch.on", "rekey",
        "durability.normalOverFull", "interpolation.query", "interpolation.insert", "backup.pool", "backup.database",
    ]

    /// The pool family's rows and the extras each must carry.
    static let poolWorkloads: [String: [String]] = [
        "pool.open": ["databaseMedianMs", "poolMedianMs", "ratioToDatabase"],
        "pool.readThroughput": ["databaseMedianMs", "poolMedianMs", "speedup"],
        "pool.latencyDuringLongRead": ["poolMedianMs", "poolMaxMs", "databaseMaxMs"],
        "pool.readsDuringWrite": ["reads", "slowestReadMs"],
        "live.externalChange": ["databaseMedianMs", "poolMedianMs"],
    ]

    @Test("--quick --json reports every workload with positive medians, for the library under test")
    func quickJSONRun() throws {
        let result = try runChild(productPath("sqlcipherkit-bench"), ["--quick", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        let report = try #require(object as? [String: Any], "stdout is not one JSON object: \(result.stdout)")

        #expect(report["mode"] as? String == "quick")
        let library = try #require(report["library"] as? [String: Any])
        #expect(library["path"] as? String == (try loadedLibrary().path))
        #expect(library["cipherVersion"] as? String == (try loadedLibrary().cipherVersion))
        #expect((report["missing"] as? [Any])?.isEmpty == true)

        let entries = try #require(report["workloads"] as? [[String: Any]])
        let byName = Dictionary(entries.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byName.keys) == Set(Self.workloads + ["cancel.latency", "cache.sqliteDefault", "cache.packageDefault"]
            + Self.poolWorkloads.keys + (libraryHasFTS5() ? ["fts.match"] : [])))
        // The pool rows carry their figures as extras, compared within the same run.
        for (name, keys) in Self.poolWorkloads {
            let extra = try #require(byName[name]?["extra"] as? [String: Any], Comment(rawValue: name))
            for key in keys { #expect((extra[key] as? Double).map { $0 > 0 } == true, "\(name).\(key): \(extra)") }
        }
        // A [Row] result is held in memory, a cursor's row is not (5,000 rows of ten integers:
        // at least 5,000 x 10 x 9 bytes).
        let wholeResult = try #require((byName["fetch.byIndex"]?["encrypted"] as? [String: Any])?["swiftPeakMiB"] as? Double)
        let cursorRow = try #require((byName["cursor.byIndex"]?["encrypted"] as? [String: Any])?["swiftPeakMiB"] as? Double)
        #expect(wholeResult >= 0.4 && cursorRow < wholeResult, "[Row] \(wholeResult) MiB, cursor \(cursorRow) MiB")
        // The page-cache rows compare encrypted with plaintext, without a floor.
        for name in ["cache.sqliteDefault", "cache.packageDefault"] {
            let extra = try #require(byName[name]?["extra"] as? [String: Any], Comment(rawValue: name))
            #expect((extra["encryptedOverUnencrypted"] as? Double ?? 0) > 0, "\(name): \(extra)")
        }
        // The streaming rows carry their memory growth; the cancellation row its latencies.
        for name in ["stream.cursor", "stream.asyncSequence"] {
            let extra = try #require(byName[name]?["extra"] as? [String: Any], Comment(rawValue: name))
            #expect((extra["peakMemoryGrowthMiB"] as? Double).map { $0 >= 0 } == true, "\(name): \(extra)")
        }
        // The main-actor stream carries its ratio to the same loop on the global executor (a loop
        // that hopped off the main actor for each row measured 10x to 35x).
        let mainActor = try #require(byName["stream.mainActor"]?["extra"] as? [String: Any])
        #expect((mainActor["ratioToGlobalExecutor"] as? Double).map { $0 > 0 } == true, "\(mainActor)")
        // The traced workloads carry their ratio to the same workload without a tracer.
        for name in ["tracing.insert.on", "tracing.fetch.on"] {
            let extra = try #require(byName[name]?["extra"] as? [String: Any], Comment(rawValue: name))
            #expect((extra["encrypted.ratioToTracingOff"] as? Double).map { $0 > 0 } == true, "\(name): \(extra)")
        }
        // The durability row carries the commits per second of each setting.
        let durability = try #require(byName["durability.normalOverFull"]?["extra"] as? [String: Any])
        for key in ["full.commitsPerSecond", "normal.commitsPerSecond"] {
            #expect((durability[key] as? Double).map { $0 > 0 } == true, "\(key): \(durability)")
        }
        let latency = try #require(byName["cancel.latency"]?["extra"] as? [String: Any])
        #expect((latency["medianMs"] as? Double ?? 0) > 0 && (latency["maxMs"] as? Double ?? 0) < 60_000, "\(latency)")
        for name in Self.workloads {
            let entry = try #require(byName[name], "missing workload \(name)")
            let variants = ["encrypted", "unencrypted"].compactMap { entry[$0] as? [String: Any] }
            #expect(!variants.isEmpty, "\(name) has no figures")
            for figures in variants {
                let swift = try #require(figures["swiftMedianMs"] as? Double, "\(name): \(figures)")
                #expect(swift > 0, "\(name): \(figures)")
                let floor = try #require(figures["floorMedianMs"] as? Double, "\(name): \(figures)")
                #expect(floor > 0, "\(name): \(figures)")
                // The ratio is the median of the per-round paired ratios, within their spread.
                let ratio = try #require(figures["ratioToFloor"] as? Double)
                let low = try #require(figures["ratioMin"] as? Double), high = try #require(figures["ratioMax"] as? Double)
                #expect(low <= ratio && ratio <= high, "\(name): \(figures)")
                let perRound = try #require(figures["ratiosPerRun"] as? [Double])
                #expect(perRound.count == entry["runs"] as? Int)
                let runs = try #require(figures["swiftRunsMs"] as? [Double])
                #expect(runs.count == entry["runs"] as? Int)
                // Peak memory: the allocator's bytes in use (glibc's mallinfo2), for both sides.
                #if os(Linux)
                #expect((figures["swiftPeakMiB"] as? Double).map { $0 >= 0 } == true, "\(name): \(figures)")
                #expect((figures["floorPeakMiB"] as? Double).map { $0 >= 0 } == true, "\(name): \(figures)")
                #endif
            }
        }
        // Workloads measured both ways carry the encryption overhead.
        for name in ["insert", "fetch.byIndex", "entity.save"] {
            let overhead = try #require(byName[name]?["encryptionOverhead"] as? [String: Any], Comment(rawValue: name))
            #expect((overhead["swift"] as? Double ?? 0) > 0)
            #expect((overhead["floor"] as? Double ?? 0) > 0)
        }

        let targets = try #require(report["targets"] as? [[String: Any]])
        #expect(targets.count == 30, "15 targets, all but the two opening ones and the cache one for both variants, and 3 pool targets: \(targets)")
        for target in targets {
            let status = target["status"] as? String
            #expect(status == "PASS" || status == "MISS")
            let measured = try #require(target["measured"] as? Double)
            let limit = try #require(target["limit"] as? Double)
            #expect(status == (measured <= limit ? "PASS" : "MISS"))
            if let spread = target["spread"] as? [Double] {
                #expect(spread.count == 2 && spread[0] <= measured && measured <= spread[1], "\(target)")
            } else {
                #expect(target["unit"] as? String == "ms", "a ratio target without its spread: \(target)")
            }
        }
    }

    @Test("the table output names the library and every target")
    func quickTextRun() throws {
        let result = try runChild(productPath("sqlcipherkit-bench"), ["--quick", "--runs", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains(try loadedLibrary().path))
        #expect(result.stdout.contains("opening with a raw key under 5 ms"))
        #expect(result.stdout.contains("typed-statement insert <= 1.15x the C floor"))
        #expect(result.stdout.contains("spread") && result.stdout.contains("peak MiB"))
        #expect(result.stdout.contains("Encryption overhead"))
    }

    @Test("bad arguments exit with status 2 and say what is wrong")
    func badArguments() throws {
        let unknown = try runChild(productPath("sqlcipherkit-bench"), ["--fast"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown argument \"--fast\""))
        let runs = try runChild(productPath("sqlcipherkit-bench"), ["--runs", "0"])
        #expect(runs.status == 2)
        #expect(runs.stderr.contains("--runs needs a positive whole number"))
        let help = try runChild(productPath("sqlcipherkit-bench"), ["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: sqlcipherkit-bench"))
    }
}
