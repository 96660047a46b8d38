-- objects.sql: one line per member of the bloomfilter extension, with what
-- defines it, in a form that does not depend on OIDs, so that two databases
-- can be compared line for line (test/upgrade/run.sh).  Functions with
-- their arguments, result, attributes, C symbol and settings; aggregates
-- with their support functions; types with their I/O and storage;
-- operators, casts, operator families with their members, the access
-- method; and every object's comment and privileges.
SELECT pg_describe_object(d.classid, d.objid, 0) || ' | ' || CASE d.classid
	WHEN 'pg_proc'::regclass THEN (
		SELECT format('args=(%s) returns=%s kind=%s volatile=%s parallel=%s strict=%s secdef=%s leakproof=%s cost=%s rows=%s support=%s src=%s config=%s acl=%s',
					  pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
					  p.prokind, p.provolatile, p.proparallel, p.proisstrict, p.prosecdef,
					  p.proleakproof, p.procost, p.prorows, p.prosupport, p.prosrc,
					  p.proconfig, p.proacl)
			   || coalesce((
		SELECT format(' aggregate: kind=%s direct=%s trans=%s final=%s extra=%s modify=%s combine=%s serial=%s deserial=%s stype=%s space=%s init=%s mtrans=%s minv=%s mfinal=%s mextra=%s mmodify=%s mstype=%s mspace=%s minit=%s sortop=%s',
					  a.aggkind, a.aggnumdirectargs, a.aggtransfn, a.aggfinalfn, a.aggfinalextra,
					  a.aggfinalmodify, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn,
					  a.aggtranstype::regtype, a.aggtransspace, a.agginitval, a.aggmtransfn,
					  a.aggminvtransfn, a.aggmfinalfn, a.aggmfinalextra, a.aggmfinalmodify,
					  a.aggmtranstype::regtype, a.aggmtransspace, a.aggminitval,
					  a.aggsortop::regoperator)
		FROM pg_aggregate a WHERE a.aggfnoid = p.oid), '')
		FROM pg_proc p WHERE p.oid = d.objid)
	WHEN 'pg_type'::regclass THEN (
		SELECT format('len=%s byval=%s type=%s category=%s preferred=%s input=%s output=%s receive=%s send=%s modin=%s modout=%s analyze=%s align=%s storage=%s element=%s acl=%s',
					  t.typlen, t.typbyval, t.typtype, t.typcategory, t.typispreferred,
					  t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typmodout,
					  t.typanalyze, t.typalign, t.typstorage, t.typelem::regtype, t.typacl)
		FROM pg_type t WHERE t.oid = d.objid)
	WHEN 'pg_operator'::regclass THEN (
		SELECT format('kind=%s left=%s right=%s result=%s code=%s commutator=%s negator=%s restrict=%s join=%s merges=%s hashes=%s',
					  o.oprkind, o.oprleft::regtype, o.oprright::regtype, o.oprresult::regtype,
					  o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator, o.oprrest,
					  o.oprjoin, o.oprcanmerge, o.oprcanhash)
		FROM pg_operator o WHERE o.oid = d.objid)
	WHEN 'pg_cast'::regclass THEN (
		SELECT format('function=%s context=%s method=%s',
					  c.castfunc::regprocedure, c.castcontext, c.castmethod)
		FROM pg_cast c WHERE c.oid = d.objid)
	WHEN 'pg_opclass'::regclass THEN (
		SELECT format('method=%s type=%s default=%s key=%s family=%s',
					  am.amname, c.opcintype::regtype, c.opcdefault, c.opckeytype::regtype,
					  pg_describe_object('pg_opfamily'::regclass, c.opcfamily, 0))
		FROM pg_opclass c JOIN pg_am am ON am.oid = c.opcmethod WHERE c.oid = d.objid)
	WHEN 'pg_opfamily'::regclass THEN (
		SELECT format('operators=[%s] functions=[%s]',
					  (SELECT string_agg(format('%s %s %s', o.amopstrategy, o.amopopr::regoperator, o.amoppurpose),
										 ', ' ORDER BY o.amopstrategy, o.amopopr::regoperator::text)
					   FROM pg_amop o WHERE o.amopfamily = d.objid),
					  (SELECT string_agg(format('%s %s(%s,%s)', p.amprocnum, p.amproc::regprocedure,
												p.amproclefttype::regtype, p.amprocrighttype::regtype),
										 ', ' ORDER BY p.amprocnum, p.amproc::regprocedure::text)
					   FROM pg_amproc p WHERE p.amprocfamily = d.objid)))
	WHEN 'pg_am'::regclass THEN (
		SELECT format('handler=%s type=%s', am.amhandler, am.amtype)
		FROM pg_am am WHERE am.oid = d.objid)
	ELSE ''
	END || ' | comment=' || coalesce(obj_description(d.objid, d.classid::regclass::name), '-')
	AS object
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
  AND d.deptype = 'e'
ORDER BY 1;
