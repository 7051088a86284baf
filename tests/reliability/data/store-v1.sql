-- A schema-version-1 SQLite store holding tests/measurements_db/data/evidence-sample.jsonl,
-- frozen as SQL (sqlite3 iterdump) so later releases can test the upgrade from it. Do not edit.
BEGIN TRANSACTION;
CREATE TABLE accuracy_records (
	id INTEGER NOT NULL, 
	run_pk INTEGER NOT NULL, 
	workload_id INTEGER NOT NULL, 
	program VARCHAR NOT NULL, 
	t BIGINT NOT NULL, 
	family VARCHAR NOT NULL, 
	rec_key VARCHAR NOT NULL, 
	seed BIGINT, 
	inputs INTEGER NOT NULL, 
	dw_err_over_tol_max DOUBLE, 
	dw_err_over_tol_median DOUBLE, 
	dw_rel_l2 DOUBLE, 
	eager_err_over_tol_max DOUBLE, 
	eager_err_over_tol_median DOUBLE, 
	dx_err_over_tol_max DOUBLE, 
	rstd_rel_l2 DOUBLE, 
	rstd_form VARCHAR, 
	verdict VARCHAR, 
	qualified_by_source BOOLEAN, 
	extra JSON, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_accuracy_records_key UNIQUE (run_pk, workload_id, program, t, family, rec_key), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(workload_id) REFERENCES workloads (id)
);
INSERT INTO "accuracy_records" VALUES(1,1,2,'bwd.twosum_pair.p2x.w8',65536,'gaussian','seed:17',17,1,0.00041,3.0e-05,3.1e-08,0.0123,0.0011,0.38,2.2e-08,'forward',NULL,NULL,'null');
INSERT INTO "accuracy_records" VALUES(2,1,2,'bwd.twosum_pair.p2x.w8',65536,'same_sign','agg:88c24207eb34f207e33ba69f83fde6bd',NULL,120,0.00052,2.0e-05,NULL,0.0009,4.0e-05,0.41,2.4e-08,'forward',NULL,NULL,'null');
INSERT INTO "accuracy_records" VALUES(3,2,1,'flashinfer.det',1,'gaussian','agg:27c3806f9c47a69b0e609b2a2d27c528',NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pass',1,'null');
CREATE TABLE accuracy_summaries (
	id INTEGER NOT NULL, 
	run_pk INTEGER NOT NULL, 
	workload_id INTEGER NOT NULL, 
	program VARCHAR NOT NULL, 
	t BIGINT NOT NULL, 
	family VARCHAR NOT NULL, 
	records INTEGER NOT NULL, 
	inputs INTEGER NOT NULL, 
	worst DOUBLE, 
	median DOUBLE, 
	eager_worst DOUBLE, 
	eager_median DOUBLE, 
	verdict VARCHAR, 
	qualified_by_source BOOLEAN, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_accuracy_summaries_key UNIQUE (run_pk, workload_id, program, t, family), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(workload_id) REFERENCES workloads (id)
);
INSERT INTO "accuracy_summaries" VALUES(1,1,2,'bwd.twosum_pair.p2x.w8',65536,'gaussian',1,1,0.00041,3.0e-05,0.0123,0.0011,NULL,NULL);
INSERT INTO "accuracy_summaries" VALUES(2,1,2,'bwd.twosum_pair.p2x.w8',65536,'same_sign',1,120,0.00052,2.0e-05,0.0009,4.0e-05,NULL,NULL);
INSERT INTO "accuracy_summaries" VALUES(3,2,1,'flashinfer.det',1,'gaussian',1,0,NULL,NULL,NULL,NULL,'pass',1);
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0001');
CREATE TABLE cake_meta (
	"key" VARCHAR(64) NOT NULL, 
	value TEXT NOT NULL, 
	PRIMARY KEY ("key")
);
INSERT INTO "cake_meta" VALUES('schema_version','1');
CREATE TABLE programs (
	id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	fingerprint VARCHAR NOT NULL, 
	op VARCHAR NOT NULL, 
	deterministic BOOLEAN NOT NULL, 
	family VARCHAR NOT NULL, 
	runnable BOOLEAN NOT NULL, 
	description VARCHAR, 
	extra JSON, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_programs_name_fingerprint UNIQUE (name, fingerprint)
);
INSERT INTO "programs" VALUES(1,'bwd.twosum_pair.p2x.w8','sha256:5f1c...','bwd',1,'twosum_pair',1,'TwoSum per-thread dw sums, 2 programs per SM, 8 warps, fixed-order FP64 reduce','null');
INSERT INTO "programs" VALUES(2,'peer.quack.heuristic','quack-kernels==0.6.5','bwd',1,'peer',0,'QuACK rmsnorm_bwd, heuristic config, FP32 weight so dw is FP32','null');
CREATE TABLE runs (
	id INTEGER NOT NULL, 
	run_id VARCHAR NOT NULL, 
	source VARCHAR NOT NULL, 
	arch VARCHAR NOT NULL, 
	gpu VARCHAR NOT NULL, 
	sm_count INTEGER NOT NULL, 
	started VARCHAR NOT NULL, 
	host VARCHAR, 
	driver VARCHAR, 
	cuda VARCHAR, 
	torch VARCHAR, 
	triton VARCHAR, 
	package_version VARCHAR, 
	git_sha VARCHAR, 
	citation VARCHAR, 
	note VARCHAR, 
	extra JSON, 
	file_name VARCHAR NOT NULL, 
	file_sha256 VARCHAR(64) NOT NULL, 
	imported_at VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (run_id)
);
INSERT INTO "runs" VALUES(1,'h200-2026-12-02-a1','measured','sm_90a','NVIDIA H200',132,'2026-12-02T10:00:00Z',NULL,'580.159.04','13.0','2.11.0+cu130','3.6.0','0.1.0','0123abc',NULL,NULL,'null','evidence-sample.jsonl','f2aa0220a976ec92106925546843da65309fe79d083fd7b068d420d9d672b344','2026-12-02T12:30:28Z');
INSERT INTO "runs" VALUES(2,'flashinfer-pr8827-r200','published','sm_107a','NVIDIA R200',212,'2026-11-05T00:00:00Z',NULL,NULL,NULL,NULL,NULL,NULL,NULL,'flashinfer-ai/flashinfer pull request 8827, R200 table',NULL,'null','evidence-sample.jsonl','f2aa0220a976ec92106925546843da65309fe79d083fd7b068d420d9d672b344','2026-12-02T12:30:28Z');
CREATE TABLE timing_blocks (
	id INTEGER NOT NULL, 
	run_pk INTEGER NOT NULL, 
	workload_id INTEGER NOT NULL, 
	program VARCHAR NOT NULL, 
	op VARCHAR NOT NULL, 
	t BIGINT NOT NULL, 
	session VARCHAR NOT NULL, 
	round INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	copy INTEGER NOT NULL, 
	timer VARCHAR NOT NULL, 
	l2 VARCHAR NOT NULL, 
	samples BLOB, 
	n_samples INTEGER NOT NULL, 
	block_median DOUBLE, 
	median_us DOUBLE, 
	n BIGINT, 
	extra JSON, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_timing_blocks_key UNIQUE (run_pk, workload_id, program, op, t, session, round, position, copy, timer, l2), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(workload_id) REFERENCES workloads (id)
);
INSERT INTO "timing_blocks" VALUES(1,1,2,'bwd.twosum_pair.p2x.w8','bwd',65536,'s1',0,2,0,'cupti','cold',X'9A99999999C17940CDCCCCCCCCBC79400000000000D079406666666666C67940',4,412.25,NULL,NULL,'null');
INSERT INTO "timing_blocks" VALUES(2,2,1,'flashinfer.det','bwd',1,'pooled',0,0,0,'cupti','cold',NULL,0,NULL,4.83,804,'null');
CREATE TABLE workloads (
	id INTEGER NOT NULL, 
	arch VARCHAR NOT NULL, 
	h INTEGER NOT NULL, 
	x_dtype VARCHAR NOT NULL, 
	w_dtype VARCHAR NOT NULL, 
	form VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_workloads_key UNIQUE (arch, h, x_dtype, w_dtype, form)
);
INSERT INTO "workloads" VALUES(1,'sm_107a',512,'bf16','bf16','plain');
INSERT INTO "workloads" VALUES(2,'sm_90a',4096,'bf16','fp32','plain');
CREATE INDEX ix_runs_arch ON runs (arch);
CREATE INDEX ix_programs_name ON programs (name);
CREATE INDEX ix_timing_blocks_point ON timing_blocks (workload_id, program, op, t);
CREATE INDEX ix_timing_blocks_run_pk ON timing_blocks (run_pk);
CREATE INDEX ix_accuracy_records_point ON accuracy_records (workload_id, program, t);
CREATE INDEX ix_accuracy_records_run_pk ON accuracy_records (run_pk);
CREATE INDEX ix_accuracy_summaries_workload ON accuracy_summaries (workload_id);
COMMIT;
