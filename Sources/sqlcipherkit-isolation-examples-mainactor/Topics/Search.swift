import Foundation
import SqlCipherKit

// FTS5 (a CreateFTS5Table migration, match, bm25, snippet, highlight) and the JSON builder, or
// their typed refusal where the library lacks the capability, in a class without annotation of a
// module whose default isolation is the main actor (top-level code is in main.swift). Written out
// in full on purpose: the closures must be formed in the context under test.

final class SearchModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/search-default-main-actor-class.db", key: "my-passphrase")
            let marker = self.marker
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-default-main-actor-class", what: "no pattern")
            }
            if features.contains(.fts5) {
                try await db.migrate([CreateNotesSearch()])
                try await db.execute("INSERT INTO notes_fts(title, body) VALUES (?, ?), (?, ?)",
                                     "Privacy\(marker)", "keys stay private", "Other", "privacy and encryption")
                let found = try await db.query(
                    Select(col("rowid"), notes.highlight(column: 0, before: "<", after: ">").as("title"),
                           notes.snippet(column: 1, before: "[", after: "]").as("excerpt"))
                        .from(notes)
                        .where(notes.match(pattern))
                        .orderBy(notes.bm25(weights: 10, 1))
                )
                let titles = found.map { $0.get("title", as: String.self) }
                let excerpt = found.last?.get("excerpt", as: String.self) ?? ""
                let expectedTitles: [String?] = ["<Privacy>\(marker)", "Other"]
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-default-main-actor-class", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "MATCH ran without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
            }
            let docs = TableName("docs")
            let meta = col("meta")
            let tags = JSONEach(docs.col("meta"), atPath: "$.tags")
            try await db.execute("CREATE TABLE docs(id INTEGER PRIMARY KEY, meta TEXT NOT NULL)")
            try await db.execute("INSERT INTO docs(meta) VALUES (?), (?)",
                                 #"{"author":{"name":"Ada"},"stars":5,"tags":["swift","sqlite"]}"#,
                                 #"{"author":{"name":"Bob"},"stars":2,"tags":["c"]}"#)
            if features.contains(.json) {
                let rated = try await db.query(
                    Select(meta.jsonExtract(atPath: "$.author.name").as("author")).from(docs).where(meta.jsonExtract(atPath: "$.stars") >= 4)
                ).map { $0.get("author", as: String.self) }
                try expect(rated == ["Ada"], "search-default-main-actor-class", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-default-main-actor-class", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-default-main-actor-class", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-default-main-actor-class", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-default-main-actor-class", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-class", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            finished.append("search-default-main-actor-class")
            print("ok search-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/search-default-main-actor-class-pool.db", key: "my-passphrase")
            let marker = self.marker
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "no pattern")
            }
            if features.contains(.fts5) {
                try await db.migrate([CreateNotesSearch()])
                try await db.execute("INSERT INTO notes_fts(title, body) VALUES (?, ?), (?, ?)",
                                     "Privacy\(marker)", "keys stay private", "Other", "privacy and encryption")
                let found = try await db.query(
                    Select(col("rowid"), notes.highlight(column: 0, before: "<", after: ">").as("title"),
                           notes.snippet(column: 1, before: "[", after: "]").as("excerpt"))
                        .from(notes)
                        .where(notes.match(pattern))
                        .orderBy(notes.bm25(weights: 10, 1))
                )
                let titles = found.map { $0.get("title", as: String.self) }
                let excerpt = found.last?.get("excerpt", as: String.self) ?? ""
                let expectedTitles: [String?] = ["<Privacy>\(marker)", "Other"]
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-default-main-actor-class-pool", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "MATCH ran without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
            }
            let docs = TableName("docs")
            let meta = col("meta")
            let tags = JSONEach(docs.col("meta"), atPath: "$.tags")
            try await db.execute("CREATE TABLE docs(id INTEGER PRIMARY KEY, meta TEXT NOT NULL)")
            try await db.execute("INSERT INTO docs(meta) VALUES (?), (?)",
                                 #"{"author":{"name":"Ada"},"stars":5,"tags":["swift","sqlite"]}"#,
                                 #"{"author":{"name":"Bob"},"stars":2,"tags":["c"]}"#)
            if features.contains(.json) {
                let rated = try await db.query(
                    Select(meta.jsonExtract(atPath: "$.author.name").as("author")).from(docs).where(meta.jsonExtract(atPath: "$.stars") >= 4)
                ).map { $0.get("author", as: String.self) }
                try expect(rated == ["Ada"], "search-default-main-actor-class-pool", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-default-main-actor-class-pool", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-default-main-actor-class-pool", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-default-main-actor-class-pool", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-class-pool", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            finished.append("search-default-main-actor-class-pool")
            print("ok search-default-main-actor-class-pool")
        }
    }
}
