/* bloomfilter--1.0--1.1.sql: from 1.0.0 to 1.1 (CHANGELOG.md). */

\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit
